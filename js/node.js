// Node entry: loads the wasm synchronously from the package, ready on import.
import { initSync as initGlue } from "../pkg/context_compiler.js";
import { nodeFiles } from "./files.js";
import { markReady, setHashing } from "./instance.js";
import { setBusLoader } from "./bus.js";
import { checkedOptions, checkedSyncModules } from "./init.js";
import { setFiles, setStoresLoader } from "./stores.js";
import { setSchemaLoader } from "./schema.js";

// node:fs as an object, not an ES module import: making the ES module of a
// builtin reads every export, and node:fs's lazy ones load Node's streams
// and fs/promises (3–6 ms of a cold start).
const readFileSync = (file) => process.getBuiltinModule("node:fs").readFileSync(file);

// Artifact ids and verified reads hash with OpenSSL, synchronously.
// node:crypto loads on the first hash: importing it up front took 2–3 ms of
// a cold start (docs/benchmarks.md). `process.getBuiltinModule` is in every
// Node the package supports (engines) and in Deno.
let crypto;
const digest = (bytes) =>
  (crypto ??= process.getBuiltinModule("node:crypto")).createHash("sha256").update(bytes).digest();
setHashing({ sha256: digest, sha256Sync: digest });
// FsArtifactStore's files: node:fs/promises (Node and Deno).
setFiles(nodeFiles);
markReady(initGlue({ module: readFileSync(new URL("../pkg/context_compiler_bg.wasm", import.meta.url)) }));
// Each optional module loads, its glue (by require) and its .wasm, when first
// used. The JSON Schema module: when the first SchemaRegistry is made.
const schemaWasm = new URL("../pkg/context_compiler_schema_bg.wasm", import.meta.url);
setSchemaLoader(() => readFileSync(schemaWasm));
// The event-bus module loads when the first bus or handler is made.
const busWasm = new URL("../pkg/context_compiler_bus_bg.wasm", import.meta.url);
setBusLoader(() => readFileSync(busWasm));
// The stores module loads when the first KV, IndexedDB, file or SQLite store is made.
const storesWasm = new URL("../pkg/context_compiler_stores_bg.wasm", import.meta.url);
setStoresLoader(() => readFileSync(storesWasm));

export * from "./public.js";

/**
 * Already initialised in Node (each optional module loads by itself when
 * first used); kept so code written for the web entry runs unchanged. Checks
 * its options as the web entry does.
 */
export async function init(options) {
  checkedOptions(options);
}
/** Already initialised in Node; kept so code written for the web entry runs unchanged. */
export function initSync(modules) {
  if (modules !== undefined) checkedSyncModules(modules);
}
