// Node entry: loads the wasm synchronously from the package, ready on import.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { initSync as initGlue } from "../pkg/context_compiler.js";
import { nodeFiles } from "./files.js";
import { markReady, setHashing } from "./instance.js";
import { initBus as loadBus, initBusSync as loadBusSync, setBusLoader } from "./bus.js";
import { initStores as loadStores, initStoresSync as loadStoresSync, setFiles, setStoresLoader } from "./stores.js";
import { initSchemas as loadSchemas, initSchemasSync as loadSchemasSync, setSchemaLoader } from "./schema.js";

// Artifact ids and verified reads hash with OpenSSL, synchronously.
const digest = (bytes) => createHash("sha256").update(bytes).digest();
setHashing({ sha256: digest, sha256Sync: digest });
// FsArtifactStore's files: node:fs/promises (Node and Deno).
setFiles(nodeFiles);
markReady(initGlue({ module: readFileSync(new URL("../pkg/context_compiler_bg.wasm", import.meta.url)) }));
// The JSON Schema module loads when the first SchemaRegistry is made.
const schemaWasm = new URL("../pkg/context_compiler_schema_bg.wasm", import.meta.url);
setSchemaLoader(() => readFileSync(schemaWasm));
// The event-bus module loads when the first bus or handler is made.
const busWasm = new URL("../pkg/context_compiler_bus_bg.wasm", import.meta.url);
setBusLoader(() => readFileSync(busWasm));
// The stores module loads when the first KV, IndexedDB, file or SQLite store is made.
const storesWasm = new URL("../pkg/context_compiler_stores_bg.wasm", import.meta.url);
setStoresLoader(() => readFileSync(storesWasm));

export * from "./api.js";
export * from "./constants.js";
export { sqlConnection } from "./sql.js";

/** Already initialised in Node; kept so code written for the web entry runs unchanged. */
export async function init() {}
/** Already initialised in Node; kept so code written for the web entry runs unchanged. */
export function initSync() {}

/** Loads the JSON Schema module now (by default the package's own; it also loads by itself with the first SchemaRegistry). */
export async function initSchemas(input) {
  if (input === undefined) loadSchemasSync(readFileSync(schemaWasm));
  else await loadSchemas(input);
}
/** Loads the JSON Schema module synchronously (by default the package's own). */
export function initSchemasSync(input) {
  loadSchemasSync(input ?? readFileSync(schemaWasm));
}

/** Loads the event-bus module now (by default the package's own; it also loads by itself with the first bus or handler). */
export async function initBus(input) {
  if (input === undefined) loadBusSync(readFileSync(busWasm));
  else await loadBus(input);
}
/** Loads the event-bus module synchronously (by default the package's own). */
export function initBusSync(input) {
  loadBusSync(input ?? readFileSync(busWasm));
}

/** Loads the stores module now (by default the package's own; it also loads by itself with the first KV, IndexedDB, file or SQLite store). */
export async function initStores(input) {
  if (input === undefined) loadStoresSync(readFileSync(storesWasm));
  else await loadStores(input);
}
/** Loads the stores module synchronously (by default the package's own). */
export function initStoresSync(input) {
  loadStoresSync(input ?? readFileSync(storesWasm));
}
