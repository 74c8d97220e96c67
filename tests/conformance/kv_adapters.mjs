// Key-value stores for KvArtifactStore in tests and benchmarks: a Map behind
// async get/put/delete/list, optionally enforcing a value-size limit the way
// Deno KV (64 KiB) does, and returning values as bytes or ArrayBuffers.

/** Whether `a` (bytes or undefined) holds exactly the bytes of `b` (bytes or null). */
export function sameBytes(a, b) {
  if (a === undefined || b === null || b === undefined) return a === undefined && (b === null || b === undefined);
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * A KV over `map` (a new Map by default; pass one Map to several to share it).
 * `conditional: false` leaves out putIf (a single-writer KV).
 * @param {{ maxValueBytes?: number, returns?: "bytes" | "arraybuffer", map?: Map<string, Uint8Array>, conditional?: boolean }} [options]
 */
export function mapKv(options = {}) {
  const { maxValueBytes = Infinity, returns = "bytes", map = new Map(), conditional = true } = options;
  const check = (value) => {
    if (!(value instanceof Uint8Array)) throw new TypeError("put expects a Uint8Array");
    if (value.length > maxValueBytes) {
      throw new RangeError(`Value too large (max ${maxValueBytes} bytes)`);
    }
  };
  const kv = {
    map,
    async get(key) {
      const v = map.get(key);
      if (v === undefined) return null;
      return returns === "arraybuffer" ? v.slice().buffer : v.slice();
    },
    async put(key, value) {
      check(value);
      map.set(key, value.slice());
    },
    async delete(key) {
      map.delete(key);
    },
    async list({ prefix }) {
      return [...map.keys()].filter((k) => k.startsWith(prefix)).sort();
    },
  };
  if (conditional) {
    kv.putIf = async (key, value, expected) => {
      check(value);
      if (!sameBytes(map.get(key), expected)) return false;
      map.set(key, value.slice());
      return true;
    };
  }
  return kv;
}

/** Alters the last byte of an artifact's content in a mapKv (inline or last chunk). */
export function corruptInMap(map, artifactId, prefix = "") {
  const keys = [...map.keys()].filter((k) => k.startsWith(`${prefix}a/${artifactId}`)).sort();
  const key = keys[keys.length - 1];
  const value = map.get(key);
  value[value.length - 1] ^= 1;
}

/** The memory store as a conformance-suite backend. */
export function memoryBackend(lib) {
  return {
    make: async () => new lib.MemoryArtifactStore(),
    async corrupt(store, id) {
      const all = store.snapshot();
      all.find((a) => a.handle.artifactId === id).content[0] ^= 1;
      store.restore(all);
    },
    largeSize: 3 << 20,
  };
}

/** The KV store over a fresh mapKv(kvOptions) as a conformance-suite backend. */
export function kvBackend(lib, kvOptions = {}, storeOptions = {}) {
  const kvs = new WeakMap();
  return {
    async make() {
      const kv = mapKv(kvOptions);
      const store = new lib.KvArtifactStore(kv, storeOptions);
      kvs.set(store, kv);
      return store;
    },
    async corrupt(store, id) {
      corruptInMap(kvs.get(store).map, id, storeOptions.prefix ?? "");
    },
    largeSize: (storeOptions.chunkBytes ?? 65536) * 40 + 123,
  };
}
