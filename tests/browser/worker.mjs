// A module web worker running the store conformance suite against IndexedDB
// (and the KV store), posting the results back to the page.
import * as lib from "../../js/web.js";
import { runStoreSuite } from "../conformance/store_suite.mjs";
import { indexedDbBackend } from "./idb_backend.mjs";

try {
  await lib.init({ modules: ["stores"] });
  const indexeddb = await runStoreSuite(lib, indexedDbBackend(lib, "worker"));
  postMessage({ indexeddb, isWorker: typeof WorkerGlobalScope !== "undefined" });
} catch (e) {
  postMessage({ error: `${e?.code ?? ""} ${e?.message ?? e}` });
}
