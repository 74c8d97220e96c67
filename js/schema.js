// The JSON Schema module: the `jsonschema` crate in a second `.wasm`
// (`crates/schema-wasm`), so that the main module stays small and code that
// never validates never downloads it. The main module asks for it through
// the host (`schemaEngine()` in ./instance.js) when a SchemaRegistry is made:
// the Node entry then loads it, and its glue, synchronously from the
// package; the web entries' `init()` loads them with the others (./init.js).
//
// A trap in this module (it aborts on a panic, like the main one) closes
// this module only: later compiles throw MODULE_POISONED, validations report
// that they could not run, and the main module goes on.
import { codedError } from "./coded.js";
import { esmRequire, glueLoader } from "./lazy-glue.js";

/** The module's glue, imported when the module is loaded. */
const glueSource = glueLoader({
  importGlue: () => import("../pkg/context_compiler_schema.js"),
  requireGlue: () => esmRequire(import.meta.url)?.("../pkg/context_compiler_schema.js") ?? null,
  what: "the JSON Schema module",
});

const state = {
  /** The glue, once the module is instantiated. */
  glue: null,
  /** The engine handed to the main module, once the module is instantiated. */
  engine: null,
  /** A synchronous loader (the Node entry's), run on first use. */
  loader: null,
  /** The MODULE_POISONED error, once this module has trapped. */
  poisoned: null,
};

function isTrap(e) {
  return e instanceof WebAssembly.RuntimeError || (e instanceof RangeError && /maximum call stack/i.test(e.message));
}

/** Runs `f` in the schema module; a trap poisons it (and only it). */
function call(f) {
  if (state.poisoned !== null) throw state.poisoned;
  try {
    return f();
  } catch (e) {
    if (!isTrap(e)) throw e;
    state.poisoned = codedError(
      "MODULE_POISONED",
      `the JSON Schema module stopped after a trap (${e.message}); load the package again to validate`,
      e,
    );
    throw codedError("INTERNAL_PANIC", `the JSON Schema module trapped: ${e.message}`, e);
  }
}

const engine = {
  compile(schema, dialect, resources) {
    const compiled = call(() => state.glue.compile(schema, dialect, resources));
    return {
      validate: (data) => call(() => compiled.validate(data)),
      free() {
        if (state.poisoned === null) compiled.free();
      },
    };
  },
  checkResource(uri, document) {
    return call(() => state.glue.checkResource(uri, document));
  },
};

/** The engine, loading the module first if a synchronous loader is set; throws NOT_INITIALIZED otherwise. */
export function schemaEngine() {
  if (state.engine === null && state.loader !== null) {
    const load = state.loader;
    state.loader = null;
    initSchemasSync(load());
  }
  if (state.engine === null) {
    throw codedError(
      "NOT_INITIALIZED",
      "SchemaRegistry is in the JSON Schema module, which is not loaded: `await init()` loads it unless `modules` leaves \"schemas\" out (then `await init({ modules: [\"schemas\"] })`, or `initSync({ main, schemas })`)",
    );
  }
  return state.engine;
}

/** Hands in the module's glue, imported by an entry that imports it statically. */
export const setSchemaGlue = glueSource.set;

/** Sets how the Node entry loads the module on first use (bytes, synchronously). */
export function setSchemaLoader(loader) {
  state.loader = loader;
}

/**
 * Loads the JSON Schema module. `input` is a URL, a `Response`, bytes, or a
 * `WebAssembly.Module`; by default the `.wasm` next to the glue is fetched.
 */
export async function initSchemas(input) {
  if (state.engine !== null) return;
  const glue = await glueSource.load();
  if (state.engine !== null) return;
  await glue.default(input === undefined ? undefined : { module_or_path: input });
  state.glue = glue;
  state.engine = engine;
}

/** Loads the JSON Schema module synchronously from bytes or a `WebAssembly.Module`. */
export function initSchemasSync(input) {
  if (state.engine !== null) return;
  const glue = glueSource.loadSync();
  glue.initSync({ module: input });
  state.glue = glue;
  state.engine = engine;
}
