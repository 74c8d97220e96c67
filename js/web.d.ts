export * from "../pkg/context_compiler.js";
export * from "./constants.js";
/**
 * Initialises the module. `input` is a URL, a `Response`, bytes, or a
 * `WebAssembly.Module`; by default the `.wasm` next to the glue is fetched.
 */
export function init(input?: RequestInfo | URL | Response | BufferSource | WebAssembly.Module): Promise<void>;
/** Initialises synchronously from bytes or a `WebAssembly.Module`. */
export function initSync(input: BufferSource | WebAssembly.Module): void;
/**
 * Loads the JSON Schema module (needed once before `new SchemaRegistry()`).
 * `input` is a URL, a `Response`, bytes, or a `WebAssembly.Module`; by default
 * the `.wasm` next to the glue is fetched.
 */
export function initSchemas(input?: RequestInfo | URL | Response | BufferSource | WebAssembly.Module): Promise<void>;
/** Loads the JSON Schema module synchronously from bytes or a `WebAssembly.Module`. */
export function initSchemasSync(input: BufferSource | WebAssembly.Module): void;
