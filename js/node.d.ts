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
 * Already initialised in Node (each optional module loads by itself when
 * first used); kept for code shared with the web entry.
 */
export function init(options?: InitOptions): Promise<void>;
/** Already initialised in Node; a no-op kept for code shared with the web entry. */
export function initSync(modules?: SyncModules): void;
