// Web / edge entry (browsers, web workers, Deno, Cloudflare workerd): call
// `await init()` (or `initSync(module)`) once before using anything. Calls
// made before that throw a ContextCompilerError with code NOT_INITIALIZED
// (see ./instance.js).
import * as glue from "../pkg/context_compiler.js";
import { isReady, markReady, setHashing } from "./instance.js";

// Stores hash with the host's WebCrypto where it has one (browsers in a
// secure context, workers, Deno, workerd); elsewhere in wasm.
const subtle = globalThis.crypto?.subtle;
if (subtle !== undefined) setHashing({ sha256: (bytes) => subtle.digest("SHA-256", bytes) });

/**
 * Initialises the module. `input` is a URL, a `Response`, bytes, or a
 * `WebAssembly.Module`; by default the `.wasm` next to the glue is fetched.
 */
export async function init(input) {
  if (isReady()) return;
  const exports = await glue.default(input === undefined ? undefined : { module_or_path: input });
  markReady(exports);
}

/** Initialises synchronously from bytes or a `WebAssembly.Module` (e.g. workerd's wasm import). */
export function initSync(input) {
  if (isReady()) return;
  markReady(glue.initSync({ module: input }));
}

export * from "./api.js";
export * from "./constants.js";
export { sqlConnection } from "./sql.js";
export { initSchemas, initSchemasSync } from "./schema.js";
export { initBus, initBusSync } from "./bus.js";
export { initStores, initStoresSync } from "./stores.js";
