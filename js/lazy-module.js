// One of the package's wasm modules that is loaded only when first used (the
// event-bus module, ./bus.js; the stores module, ./stores.js): an instance of
// its own with its own guard (./module-guard.js), loaded synchronously by the
// Node entry's loader on first use, or by `init` / `initSync` beforehand.
import { codedError } from "./coded.js";
import { createGuard } from "./module-guard.js";

/**
 * The guard and loaders of `glue`'s instance. `host`, `what` and
 * `whenPoisoned` are as for `createGuard`; `notInitialized(name)` is the
 * message of the NOT_INITIALIZED error thrown when `name` is used before the
 * module is loaded and no loader is set.
 */
export function createLazyModule({ glue, host, what, whenPoisoned, notInitialized }) {
  /** A synchronous loader (the Node entry's), run on first use. */
  let loader = null;

  const guard = createGuard({
    glue,
    host,
    what,
    whenPoisoned,
    whenNotReady(name) {
      if (loader === null) throw codedError("NOT_INITIALIZED", notInitialized(name));
      const load = loader;
      loader = null;
      initSync(load());
    },
  });

  /**
   * Loads the module. `input` is a URL, a `Response`, bytes, or a
   * `WebAssembly.Module`; by default the `.wasm` next to the glue is fetched.
   */
  async function init(input) {
    if (guard.isReady()) return;
    const exports = await glue.default(input === undefined ? undefined : { module_or_path: input });
    guard.markReady(exports);
  }

  /** Loads the module synchronously from bytes or a `WebAssembly.Module`. */
  function initSync(input) {
    if (guard.isReady()) return;
    guard.markReady(glue.initSync({ module: input }));
  }

  /** Sets how the Node entry loads the module on first use (bytes, synchronously). */
  function setLoader(load) {
    loader = load;
  }

  return { guardClass: guard.guardClass, init, initSync, setLoader };
}
