import type { ModuleInput, SyncModuleInput } from "./host-types.js";
export * from "../pkg/types/context_compiler.js";
export * from "../pkg/types/context_compiler_bus.js";
export * from "../pkg/types/context_compiler_stores.js";
// Both the main module and the stores module have a PersistentMemory class
// (each opens memories over its own stores); the name is the main module's.
export { PersistentMemory } from "../pkg/types/context_compiler.js";
export * from "./constants.js";
export { sqlConnection } from "./sql.js";
export type { ModuleInput, SyncModuleInput } from "./host-types.js";
/** Already initialised in Node; a no-op kept for code shared with the web entry. */
export function init(input?: ModuleInput): Promise<void>;
/** Already initialised in Node; a no-op kept for code shared with the web entry. */
export function initSync(input?: SyncModuleInput): void;
/**
 * Loads the JSON Schema module now (Node loads it by itself when the first
 * `SchemaRegistry` is made); `input` as for the web entry, by default the
 * package's own `.wasm`.
 */
export function initSchemas(input?: ModuleInput): Promise<void>;
/** Loads the JSON Schema module synchronously from bytes or a `WebAssembly.Module`. */
export function initSchemasSync(input?: SyncModuleInput): void;
/**
 * Loads the event-bus module now (Node loads it by itself when the first bus
 * or handler is made); `input` as for the web entry, by default the
 * package's own `.wasm`.
 */
export function initBus(input?: ModuleInput): Promise<void>;
/** Loads the event-bus module synchronously from bytes or a `WebAssembly.Module`. */
export function initBusSync(input?: SyncModuleInput): void;
/**
 * Loads the stores module now (Node loads it by itself when the first KV,
 * IndexedDB, file or SQLite store is made); `input` as for the web entry, by
 * default the package's own `.wasm`.
 */
export function initStores(input?: ModuleInput): Promise<void>;
/** Loads the stores module synchronously from bytes or a `WebAssembly.Module`. */
export function initStoresSync(input?: SyncModuleInput): void;
