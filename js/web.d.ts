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
/**
 * Initialises the module. `input` is a URL (a string or `URL`), a fetch
 * `Response` or a promise of one, bytes, or a `WebAssembly.Module`; by
 * default the `.wasm` next to the glue is fetched.
 */
export function init(input?: ModuleInput): Promise<void>;
/** Initialises synchronously from bytes or a `WebAssembly.Module`. */
export function initSync(input: SyncModuleInput): void;
/**
 * Loads the JSON Schema module (needed once before `new SchemaRegistry()`).
 * `input` as for `init`; by default the `.wasm` next to the glue is fetched.
 */
export function initSchemas(input?: ModuleInput): Promise<void>;
/** Loads the JSON Schema module synchronously from bytes or a `WebAssembly.Module`. */
export function initSchemasSync(input: SyncModuleInput): void;
/**
 * Loads the event-bus module (needed once before the first `EventBus`,
 * `SessionTimeoutMonitor`, `EpisodeSummarizer`, `FactExtractor` or
 * `SleepHandler`). `input` as for `init`; by default the `.wasm` next to the
 * glue is fetched.
 */
export function initBus(input?: ModuleInput): Promise<void>;
/** Loads the event-bus module synchronously from bytes or a `WebAssembly.Module`. */
export function initBusSync(input: SyncModuleInput): void;
/**
 * Loads the stores module (needed once before the first `KvArtifactStore`,
 * `IndexedDbArtifactStore`, `FsArtifactStore` or `SqliteArtifactStore`).
 * `input` as for `init`; by default the `.wasm` next to the glue is fetched.
 */
export function initStores(input?: ModuleInput): Promise<void>;
/** Loads the stores module synchronously from bytes or a `WebAssembly.Module`. */
export function initStoresSync(input: SyncModuleInput): void;
