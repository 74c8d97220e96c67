// The one initialisation of the web entries (./web.js, ./inline.js): loads
// the main module and, by default, every optional module (the event bus,
// the persistent stores, JSON Schema validation) in parallel, so that every
// class is usable after one `await init()`. `init({ modules: [...] })` names
// the optional modules to load and leaves the others out (they are fetched
// by a later `init` that names them); `init({ wasm: { main, bus, ... } })`
// says where a module's `.wasm` is when it is not next to its glue.
// `initSync({ main, bus?, stores?, schemas? })` loads the modules it is given
// (workerd, where each `.wasm` is imported as a compiled module).
import * as glue from "../pkg/context_compiler.js";
import { initBus, initBusSync } from "./bus.js";
import { codedError } from "./coded.js";
import { OPTIONAL_MODULES, checkedOptions, checkedSyncModules } from "./init-options.js";
import { isReady, markReady, setHashing } from "./instance.js";
import { initSchemas, initSchemasSync } from "./schema.js";
import { initStores, initStoresSync } from "./stores.js";

/**
 * Stores hash with the host's WebCrypto where it has one (browsers in a
 * secure context, workers, Deno, workerd); elsewhere in wasm. Called by the
 * web entries when they load (not in Node, where reading `globalThis.crypto`
 * loads WebCrypto and the Node entry hashes with node:crypto).
 */
export function useHostCrypto() {
  const subtle = globalThis.crypto?.subtle;
  if (subtle !== undefined) setHashing({ sha256: (bytes) => subtle.digest("SHA-256", bytes) });
}

export { OPTIONAL_MODULES, checkedOptions, checkedSyncModules };

/** How each optional module loads: [async, sync]. */
const LOADERS = {
  bus: [initBus, initBusSync],
  stores: [initStores, initStoresSync],
  schemas: [initSchemas, initSchemasSync],
};

async function initMain(input) {
  if (isReady()) return;
  const exports = await glue.default(input === undefined ? undefined : { module_or_path: input });
  markReady(exports);
}

/**
 * Loads the main module and the optional ones `options.modules` names (by
 * default all), in parallel. Each `.wasm` is fetched next to its glue unless
 * `options.wasm` gives it (a URL, a `Response`, bytes or a compiled module).
 * Modules already loaded are not loaded again.
 */
export async function init(options) {
  const { modules, wasm } = checkedOptions(options);
  await Promise.all([initMain(wasm.main), ...modules.map((m) => LOADERS[m][0](wasm[m]))]);
}

/**
 * Loads synchronously the modules it is given, from bytes or compiled
 * modules: `{ main, bus?, stores?, schemas? }` (`main` is needed until the
 * main module is loaded).
 */
export function initSync(modules) {
  checkedSyncModules(modules);
  if (!isReady()) {
    if (modules.main === undefined) throw codedError("INVALID_ARGUMENT", "initSync: modules.main is needed to load the main module");
    markReady(glue.initSync({ module: modules.main }));
  }
  for (const m of OPTIONAL_MODULES) {
    if (modules[m] !== undefined) LOADERS[m][1](modules[m]);
  }
}
