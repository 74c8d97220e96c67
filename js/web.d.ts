import type { InitOptions, SyncModules } from "./init.js";
export * from "../pkg/types/context_compiler.js";
export * from "../pkg/types/context_compiler_bus.js";
export * from "../pkg/types/context_compiler_stores.js";
// Both the main module and the stores module have a PersistentMemory class
// (each opens memories over its own stores); the name is the main module's.
export { PersistentMemory } from "../pkg/types/context_compiler.js";
export * from "./constants.js";
export * from "./events.js";
export { pgConnection, sqlConnection } from "./sql.js";
export { redisKv } from "./redis.js";
export type { ModuleInput, SyncModuleInput } from "./host-types.js";
export type { InitOptions, InlineInitOptions, OptionalModule, SyncModules } from "./init.js";
/**
 * Loads the main module and, in parallel, the optional modules
 * `options.modules` names (by default all: the event bus, the stores and
 * JSON Schema validation), so that every class is usable once it resolves.
 * Each `.wasm` is fetched next to its glue unless `options.wasm` says where
 * it is. Modules already loaded are not loaded again.
 */
export function init(options?: InitOptions): Promise<void>;
/**
 * Loads synchronously the modules it is given, from bytes or compiled
 * modules (workerd's `.wasm` imports): `{ main, bus?, stores?, schemas? }`.
 */
export function initSync(modules: SyncModules): void;
