// The stores module: the persistent artifact stores (`KvArtifactStore`,
// `IndexedDbArtifactStore`, `FsArtifactStore`, `SqliteArtifactStore`) in a
// wasm module of their own (`crates/stores-wasm`), so that code that keeps
// its artifacts in memory never downloads them, nor their glue. The Node
// entry loads both synchronously when the first store is made; the web entries' `init()`
// loads it with the others (./init.js).
//
// It is another instance with its own memory, tasks and guard: a trap in it
// closes the stores module only (later store calls throw MODULE_POISONED)
// and the main module goes on. The two reach each other's objects only
// through JS methods: the main module calls a store's `store`, `retrieve`,
// ... (crates/npm-wasm/src/artifact_store_arg.rs); a store reads a session to save through
// its hidden `__eventCount`, `__eventId` and `__eventsJson`, and has a
// loaded session made by the main module's `Session.__restore` (the host's
// `restoreSession` below; see ./session-saving.js).
import { hashing } from "./instance.js";
import { esmRequire } from "./lazy-glue.js";
import { createLazyModule } from "./lazy-module.js";
import { restoreSession } from "./session-saving.js";

/** Opens the host's file system under a directory (set by the Node entry). */
let openFiles;

/** Sets the host's file system for `FsArtifactStore` (called by the entry at load). */
export function setFiles(open) {
  openFiles = open;
}

const stores = createLazyModule({
  importGlue: () => import("../pkg/context_compiler_stores.js"),
  requireGlue: () => esmRequire(import.meta.url)?.("../pkg/context_compiler_stores.js") ?? null,
  classes: ["FsArtifactStore", "IndexedDbArtifactStore", "KvArtifactStore", "SqliteArtifactStore", "PostgresArtifactStore"],
  host: {
    sha256(bytes) {
      return hashing.sha256?.(bytes);
    },
    sha256Sync(bytes) {
      return hashing.sha256Sync?.(bytes);
    },
    files(baseDir) {
      return openFiles?.(baseDir);
    },
    restoreSession,
  },
  what: "the stores module",
  whenPoisoned:
    "its stores and the memories they opened can no longer be used (sessions, compilers and in-memory stores go on): load the package again to use them",
  notInitialized: (name) =>
    `${name} is in the stores module, which is not loaded: \`await init()\` loads it unless \`modules\` leaves "stores" out (then \`await init({ modules: ["stores"] })\`, or \`initSync({ main, stores })\`)`,
});

/** Sets how the Node entry loads the module on first use (bytes, synchronously). */
export const setStoresLoader = stores.setLoader;
/** Hands in the module's glue, imported by an entry that imports it statically. */
export const setStoresGlue = stores.setGlue;
/**
 * Loads the stores module. `input` is a URL, a `Response`, bytes, or a
 * `WebAssembly.Module`; by default the `.wasm` next to the glue is fetched.
 */
export const initStores = stores.init;
/** Loads the stores module synchronously from bytes or a `WebAssembly.Module`. */
export const initStoresSync = stores.initSync;

export const { FsArtifactStore, IndexedDbArtifactStore, KvArtifactStore, SqliteArtifactStore, PostgresArtifactStore } = stores.classes;
