import type { KeyValueLike } from "../pkg/types/context_compiler_stores.js";
/**
 * The key-value object `KvArtifactStore` takes, over an `ioredis` client the
 * caller creates: `get`, `put`, `delete`, `list` (SCAN), `putIf`, an
 * atomic compare-and-set in one Lua script, so several workers may save one
 * session, and `putExpiring` (`SET … PX`) for a sync's lease. The server must run with `maxmemory-policy noeviction`. Anything
 * but an ioredis client throws `INVALID_ARGUMENT`.
 */
export declare function redisKv(client: object): Required<KeyValueLike>;
