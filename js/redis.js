// redisKv(client): the key-value object KvArtifactStore takes, over an
// ioredis client the caller creates and hands in (the package imports no
// Redis client). putIf is one Lua script, so the session head moves by an
// atomic compare-and-set and several workers may save one session.
import { codedError } from "./coded.js";

/**
 * Sets KEYS[1] to ARGV[1] when it holds exactly ARGV[3] (ARGV[2] = "1") or
 * is absent (ARGV[2] = "0"); 1 when it wrote. Lua strings are binary-safe.
 */
const PUT_IF = `local current = redis.call('GET', KEYS[1])
if ARGV[2] == '0' then
  if current then return 0 end
elseif current ~= ARGV[3] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1])
return 1`;

/** `prefix` as a SCAN pattern matching the keys that start with it. */
function scanPattern(prefix) {
  return `${prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`;
}

/** `bytes` as the Buffer ioredis sends as is (a Uint8Array would be sent as text). */
function buffer(bytes) {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * The KV over `client`, an ioredis `Redis`: `get`, `put`, `delete`, `list`
 * (SCAN) and `putIf` (a Lua compare-and-set). The server must not evict
 * keys (`maxmemory-policy noeviction`): an evicted event or head is a lost
 * event. Values are bytes; keys are the store's (give the store a `prefix`
 * to share a database).
 */
export function redisKv(client) {
  if (client === null || typeof client !== "object" || typeof client.getBuffer !== "function" || typeof client.eval !== "function") {
    throw codedError("INVALID_ARGUMENT", "redisKv takes an ioredis client (with getBuffer and eval)");
  }
  return {
    get: (key) => client.getBuffer(key),
    async put(key, value) {
      await client.set(key, buffer(value));
    },
    async delete(key) {
      await client.del(key);
    },
    async list({ prefix }) {
      const keys = new Set();
      let cursor = "0";
      do {
        const [next, batch] = await client.scan(cursor, "MATCH", scanPattern(prefix), "COUNT", 1000);
        for (const k of batch) keys.add(k);
        cursor = next;
      } while (cursor !== "0");
      return [...keys].sort();
    },
    // A session's lease: a key Redis expires by its own clock (PX).
    async putExpiring(key, value, ttlMs) {
      await client.set(key, buffer(value), "PX", Math.max(1, Math.ceil(ttlMs)));
    },
    async putIf(key, value, expected) {
      const wrote = expected === null
        ? await client.eval(PUT_IF, 1, key, buffer(value), "0", "")
        : await client.eval(PUT_IF, 1, key, buffer(value), "1", buffer(expected));
      return wrote === 1;
    },
  };
}
