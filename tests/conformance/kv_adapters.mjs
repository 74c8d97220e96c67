// Key-value stores for KvArtifactStore in tests and benchmarks: a Map behind
// async get/put/delete/list, optionally enforcing a value-size limit the way
// Deno KV (64 KiB) does, and returning values as bytes or ArrayBuffers.

/**
 * @param {{ maxValueBytes?: number, returns?: "bytes" | "arraybuffer" }} [options]
 */
export function mapKv(options = {}) {
  const map = new Map();
  const { maxValueBytes = Infinity, returns = "bytes" } = options;
  return {
    map,
    async get(key) {
      const v = map.get(key);
      if (v === undefined) return null;
      return returns === "arraybuffer" ? v.slice().buffer : v.slice();
    },
    async put(key, value) {
      if (!(value instanceof Uint8Array)) throw new TypeError("put expects a Uint8Array");
      if (value.length > maxValueBytes) {
        throw new RangeError(`Value too large (max ${maxValueBytes} bytes)`);
      }
      map.set(key, value.slice());
    },
    async delete(key) {
      map.delete(key);
    },
    async list({ prefix }) {
      return [...map.keys()].filter((k) => k.startsWith(prefix)).sort();
    },
  };
}

/** Alters the last byte of an artifact's content in a mapKv (inline or last chunk). */
export function corruptInMap(map, artifactId, prefix = "") {
  const keys = [...map.keys()].filter((k) => k.startsWith(`${prefix}a/${artifactId}`)).sort();
  const key = keys[keys.length - 1];
  const value = map.get(key);
  value[value.length - 1] ^= 1;
}
