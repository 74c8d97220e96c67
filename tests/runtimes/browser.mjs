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

/** Runs the workload with `lib` (the package as the bundle imports it, initialised). */
export async function runInBrowser(lib) {
  try {
    globalThis.workloadResult = await workload(lib, await openKv(`workload-${Date.now()}`), 65536);
    document.title = "done";
  } catch (e) {
    globalThis.workloadError = `${e?.code ?? ""} ${e?.message ?? e}`;
    document.title = "failed";
  }
}
