// The workload in a browser page built by a bundler (tests/js/runtimes.test.mjs
// builds it with Vite and with esbuild and loads it in Chromium): storage is
// an IndexedDB object store behind the KV interface. The outcome is left in
// `globalThis.workloadResult` (or `workloadError`) and in the page's title.
import { workload } from "./workload.mjs";

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function openKv(name) {
  const open = indexedDB.open(name, 1);
  open.onupgradeneeded = () => open.result.createObjectStore("kv");
  const db = await request(open);
  const store = (mode) => db.transaction("kv", mode).objectStore("kv");
  return {
    get: (k) => request(store("readonly").get(k)),
    put: (k, v) => request(store("readwrite").put(v, k)),
    delete: (k) => request(store("readwrite").delete(k)),
    list: async ({ prefix }) => (await request(store("readonly").getAllKeys())).filter((k) => k.startsWith(prefix)),
  };
}

/**
 * Uses a class of each optional module after the one `init()`: an event bus
 * fed by a session, a schema registry, a KV store.
 */
async function everyModule(lib) {
  const bus = new lib.EventBus();
  const session = new lib.Session({ sessionId: "modules" });
  session.attachBus(bus, { agentId: "page" });
  session.record("user_input", "hello");
  const registry = new lib.SchemaRegistry();
  registry.register("n", { type: "integer" });
  const map = new Map();
  const store = new lib.KvArtifactStore({ get: async (k) => map.get(k) ?? null, put: async (k, v) => void map.set(k, v), delete: async (k) => void map.delete(k) });
  const handle = await store.store("bytes", "page");
  return {
    busQueued: bus.pending,
    schema: [registry.validate("n", 1).valid, registry.validate("n", "1").valid],
    stored: (await store.retrieve(handle.artifactId))?.length,
  };
}

/** Runs the workload with `lib` (the package as the bundle imports it, initialised). */
export async function runInBrowser(lib) {
  try {
    globalThis.modulesResult = await everyModule(lib);
    globalThis.workloadResult = await workload(lib, await openKv(`workload-${Date.now()}`), 65536);
    document.title = "done";
  } catch (e) {
    globalThis.workloadError = `${e?.code ?? ""} ${e?.message ?? e}`;
    document.title = "failed";
  }
}
