// The generated glue of an optional wasm module (the event bus, the stores,
// JSON Schema), kept off the import path: `load()` imports it (a dynamic
// import, which bundlers split into a chunk of its own), `loadSync()` gets it
// synchronously for the Node entry's first use and for `initSync`: the glue
// is there already (imported before, or handed in by an entry that imports it
// statically, ./workerd.js), or the host can `require` an ES module (Node
// 20.19 and later, Deno, Bun).
import { codedError } from "./coded.js";

/** `require` for the package's files where the host has one for ES modules; `null` elsewhere. */
export function esmRequire(url) {
  const createRequire = globalThis.process?.getBuiltinModule?.("node:module")?.createRequire;
  return typeof createRequire === "function" ? createRequire(url) : null;
}

/**
 * The glue that `importGlue()` imports and `requireGlue()` (where the host
 * can) requires. `what` names the module in messages.
 */
export function glueLoader({ importGlue, requireGlue, what }) {
  let glue = null;
  return {
    /** The glue, once there. */
    get: () => glue,
    /** Hands in the glue imported by the entry. */
    set(g) {
      glue ??= g;
    },
    /** Imports the glue. */
    async load() {
      return (glue ??= await importGlue());
    },
    /** The glue, synchronously. */
    loadSync() {
      if (glue !== null) return glue;
      const g = requireGlue();
      if (g === null) {
        throw codedError(
          "NOT_INITIALIZED",
          `the JavaScript of ${what} is not loaded and this host cannot load it synchronously: \`await init()\` loads it (with its .wasm)`,
        );
      }
      return (glue = g);
    },
  };
}
