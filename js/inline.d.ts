import type { InlineInitOptions } from "./init.js";
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
 * Loads the main module and the optional modules `options.modules` names
 * (by default all) from the bytes inside this entry: no `.wasm` is fetched.
 */
export function init(options?: InlineInitOptions): Promise<void>;
