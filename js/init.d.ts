import type { ModuleInput, SyncModuleInput } from "./host-types.js";

/**
 * The package's optional modules, each a `.wasm` of its own: the event bus
 * and its handlers (`"bus"`), the persistent stores (`"stores"`: KV,
 * IndexedDB, files, SQLite) and JSON Schema validation (`"schemas"`). The
 * main module (sessions, compilers, tools, in-memory stores) always loads.
 */
export type OptionalModule = "bus" | "stores" | "schemas";

/** What `init` loads, and from where. */
export interface InitOptions {
  /**
   * The optional modules to load (default all three). The ones left out are
   * never fetched; their classes throw NOT_INITIALIZED until a later `init`
   * names them.
   */
  modules?: OptionalModule[];
  /**
   * Where a module's `.wasm` is when it is not next to its glue (a URL, a
   * `Response`, bytes or a compiled module), e.g. the URLs a bundler's
   * `.wasm` imports give.
   */
  wasm?: { main?: ModuleInput } & { [M in OptionalModule]?: ModuleInput };
}

/**
 * The modules `initSync` loads: `main` (needed until the main module is
 * loaded; INVALID_ARGUMENT without it then) and any optional ones.
 */
export type SyncModules = { main?: SyncModuleInput } & { [M in OptionalModule]?: SyncModuleInput };

/** The options of the inline entry's `init`: its modules are inside it. */
export interface InlineInitOptions {
  /** The optional modules to load (default all three). */
  modules?: OptionalModule[];
}
