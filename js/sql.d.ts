import type { SqlConnectionLike } from "../pkg/types/context_compiler_stores.js";
/**
 * The connection `SqliteArtifactStore` takes, made from a `node:sqlite`
 * `DatabaseSync` (Node 22.5+, Deno), a `sql.js` `Database`, a Cloudflare
 * Durable Object's SQLite storage (`ctx.storage`) or a D1 database (D1 is
 * not run by the tests); an object that already has `query` and `batch` is
 * returned as it is. Anything else throws `INVALID_ARGUMENT`.
 */
export declare function sqlConnection(db: object): SqlConnectionLike;
/**
 * The connection `PostgresArtifactStore` takes, over a `pg` `Pool` (each
 * batch holds one pooled client for its transaction) or a connected `pg`
 * `Client` (batches run one at a time). The package does not import `pg`.
 * Anything without a `query` method throws `INVALID_ARGUMENT`.
 */
export declare function pgConnection(db: object): SqlConnectionLike;
