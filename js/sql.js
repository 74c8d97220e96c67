// sqlConnection(db): the connection SqliteArtifactStore takes, made from the
// SQLite handle of the usual engines; pgConnection(pool): the one
// PostgresArtifactStore takes. Plain JS, no engine or client imported: the
// caller opens the database and hands it in.
import { codedError } from "./coded.js";

/** Runs `statements` between BEGIN and COMMIT with `run`, rolling back on a failure. */
function transaction(exec, run, statements) {
  exec("BEGIN IMMEDIATE");
  try {
    for (const { sql, params } of statements) run(sql, params);
    exec("COMMIT");
  } catch (e) {
    exec("ROLLBACK");
    throw e;
  }
}

/** `params` as a Durable Object's `sql.exec` binds them: bytes as ArrayBuffers. */
const durableParams = (params) => params.map((p) => (p instanceof Uint8Array ? p.slice().buffer : p));

/**
 * A connection over `db`: a `node:sqlite` `DatabaseSync` (Node 22.5+, and
 * Deno's `node:sqlite`), a `sql.js` `Database`, a Cloudflare Durable
 * Object's storage with SQLite (`ctx.storage`) or a D1 database. Any other
 * object with `query` and `batch` is returned as it is.
 */
export function sqlConnection(db) {
  if (db !== null && typeof db === "object" && typeof db.query === "function" && typeof db.batch === "function") return db;
  if (db !== null && typeof db === "object" && typeof db.sql?.exec === "function" && typeof db.transactionSync === "function") {
    // A Durable Object's storage: transactionSync runs the statements atomically.
    return {
      query: (sql, params) => [...db.sql.exec(sql, ...durableParams(params)).raw()],
      batch: (statements) => db.transactionSync(() => statements.forEach((s) => db.sql.exec(s.sql, ...durableParams(s.params)))),
    };
  }
  if (db !== null && typeof db === "object" && typeof db.prepare === "function" && typeof db.batch === "function") {
    // D1: batch() is one transaction; raw() gives the rows as arrays.
    return {
      query: (sql, params) => db.prepare(sql).bind(...params).raw(),
      batch: (statements) => db.batch(statements.map((s) => db.prepare(s.sql).bind(...s.params))),
    };
  }
  if (db !== null && typeof db === "object" && typeof db.export === "function" && typeof db.exec === "function") {
    // sql.js: exec returns [{ columns, values }].
    return {
      query: (sql, params) => db.exec(sql, params)[0]?.values ?? [],
      batch: (statements) => transaction((sql) => db.run(sql), (sql, params) => db.run(sql, params), statements),
    };
  }
  if (db !== null && typeof db === "object" && typeof db.prepare === "function" && typeof db.exec === "function") {
    // node:sqlite DatabaseSync: rows are objects in SELECT order.
    return {
      query: (sql, params) => db.prepare(sql).all(...params),
      batch: (statements) => transaction((sql) => db.exec(sql), (sql, params) => db.prepare(sql).run(...params), statements),
    };
  }
  throw codedError("INVALID_ARGUMENT", "sqlConnection takes a node:sqlite DatabaseSync, a sql.js Database, a Durable Object's storage, a D1 database, or an object with query and batch");
}

/** PostgreSQL's `int8` (`BIGINT`) type oid: `pg` hands such columns back as strings. */
const INT8 = 20;

/** The rows of a `pg` result as arrays, `BIGINT`s as numbers (the store's counts fit). */
function pgRows(result) {
  const int8 = (result.fields ?? []).map((f) => f.dataTypeID === INT8);
  return result.rows.map((row) => row.map((v, i) => (int8[i] && typeof v === "string" ? Number(v) : v)));
}

/** Runs `statements` between BEGIN and COMMIT on `client`, rolling back on a failure. */
async function pgTransaction(client, statements) {
  await client.query("BEGIN");
  try {
    for (const { sql, params } of statements) await client.query({ text: sql, values: params });
    await client.query("COMMIT");
  } catch (e) {
    await client.query("ROLLBACK").catch(() => {});
    throw e;
  }
}

/**
 * The connection `PostgresArtifactStore` takes, over a `pg` `Pool` (each
 * batch holds one client of the pool for its whole transaction, released
 * after) or a connected `Client` (its batches run one after another: a
 * client is one connection, so two transactions may not interleave on it).
 * The package imports no `pg`: the caller creates the pool and hands it in.
 */
export function pgConnection(db) {
  if (db === null || typeof db !== "object" || typeof db.query !== "function") {
    throw codedError("INVALID_ARGUMENT", "pgConnection takes a pg Pool or a connected pg Client");
  }
  const query = async (sql, params) => pgRows(await db.query({ text: sql, values: params, rowMode: "array" }));
  const isPool = typeof db.connect === "function" && "totalCount" in db;
  if (isPool) {
    return {
      query,
      async batch(statements) {
        const client = await db.connect();
        let broken;
        try {
          await pgTransaction(client, statements);
        } catch (e) {
          // A connection error leaves the client unusable: the pool drops it.
          if (e?.code === undefined || String(e.code).startsWith("08")) broken = e;
          throw e;
        } finally {
          client.release(broken);
        }
      },
    };
  }
  let queue = Promise.resolve();
  return {
    query,
    batch(statements) {
      const run = queue.then(() => pgTransaction(db, statements));
      queue = run.catch(() => {});
      return run;
    },
  };
}
