// One of the package's wasm modules that is loaded only when first used (the
// event-bus module, ./bus.js; the stores module, ./stores.js): an instance of
// its own with its own guard (./module-guard.js). Its glue (the generated
// JavaScript) is not on the import path either: it is imported when the module
// is loaded, by `init` (a dynamic import), or, synchronously, by the Node
// entry's loader on first use and by `initSync` (./lazy-glue.js).
//
// Until then each of its classes is a stand-in (`lazyClass`) that the entries
// export: constructing one (or reading a static) loads the module where a
// synchronous loader is set, or throws NOT_INITIALIZED; once it is loaded the
// stand-in forwards everything to the guarded glue class.
import { codedError } from "./coded.js";
import { createGuard, unknownOptions } from "./module-guard.js";
import { glueLoader } from "./lazy-glue.js";

/**
 * The guard and loaders of a module whose glue `importGlue()` imports
 * (`requireGlue()` synchronously, where the host can). `classes` are the
 * names of the glue classes the entries export; `host`, `what` and
 * `whenPoisoned` are as for `createGuard`; `notInitialized(name)` is the
 * message of the NOT_INITIALIZED error thrown when `name` is used before the
 * module is loaded and no loader is set.
 */
export function createLazyModule({ importGlue, requireGlue, classes, host, what, whenPoisoned, notInitialized }) {
  const glue = glueLoader({ importGlue, requireGlue, what });
  /** A synchronous loader of the `.wasm` (the Node entry's), run on first use. */
  let loader = null;
  /** The guard, made when the glue is there. */
  let guard = null;
  /** The guarded glue classes, by name, once the glue is there. */
  const real = new Map();
  /** The stand-ins, by name. */
  const standIns = new Map();

  /** Guards the glue's classes, once, when it has been imported. */
  function attach(g) {
    if (guard !== null) return;
    guard = createGuard({
      glue: g,
      host,
      what,
      whenPoisoned,
      whenNotReady(name) {
        ready(name);
      },
    });
    for (const name of classes) {
      const Class = guard.guardClass(g[name]);
      real.set(name, Class);
      // A class made from the stand-in before it loaded (`class X extends
      // EventBus`) finds the glue's methods through its placeholder.
      Object.setPrototypeOf(standIns.get(name).placeholder.prototype, Class.prototype);
    }
  }

  /** Whether the module is loaded and instantiated. */
  const isReady = () => guard !== null && guard.isReady();

  /** Loads the module synchronously with the loader, or throws NOT_INITIALIZED for `name`. */
  function ready(name) {
    if (isReady()) return;
    if (loader === null) throw codedError("NOT_INITIALIZED", notInitialized(name));
    const load = loader;
    loader = null;
    initSync(load());
  }

  /** The guarded class `name` if the module is loaded or can be now; `null` otherwise. */
  function loaded(name) {
    if (!isReady() && loader !== null) ready(name);
    return isReady() ? real.get(name) : null;
  }

  /**
   * Loads the module. `input` is a URL, a `Response`, bytes, or a
   * `WebAssembly.Module`; by default the `.wasm` next to the glue is fetched.
   */
  async function init(input) {
    if (isReady()) return;
    const g = await glue.load();
    attach(g);
    if (isReady()) return;
    const exports = await g.default(input === undefined ? undefined : { module_or_path: input });
    guard.markReady(exports);
  }

  /** Loads the module synchronously from bytes or a `WebAssembly.Module`. */
  function initSync(input) {
    if (isReady()) return;
    const g = glue.loadSync();
    attach(g);
    guard.markReady(g.initSync({ module: input }));
  }

  /** Sets how the Node entry loads the `.wasm` on first use (bytes, synchronously). */
  function setLoader(load) {
    loader = load;
  }

  /**
   * The stand-in exported for the glue class `name`: a proxy over a
   * placeholder function that forwards to the guarded class once the module
   * is loaded (`instanceof`, statics and subclassing included).
   */
  /** `instanceof` a class whose module is not loaded: nothing is one yet. */
  const notYet = Object.defineProperty(() => false, "name", { value: "[Symbol.hasInstance]" });

  function lazyClass(name) {
    const placeholder = Object.defineProperty(function () {}, "name", { value: name });
    const target = () => loaded(name) ?? placeholder;
    const standIn = new Proxy(placeholder, {
      construct(_placeholder, args, newTarget) {
        // A misspelt option is INVALID_ARGUMENT before and after loading.
        const e = unknownOptions(name, args);
        if (e !== null) throw e;
        ready(name);
        const Class = real.get(name);
        return Reflect.construct(Class, args, newTarget === standIn ? Class : newTarget);
      },
      apply(_placeholder, thisArg, args) {
        ready(name);
        return Reflect.apply(real.get(name), thisArg, args);
      },
      get(_placeholder, key) {
        if (key === "name") return name;
        // `instanceof` loads nothing: before the module is loaded no
        // instance exists. (Where it cannot load yet, a subclass's prototype
        // reaches the glue's through the placeholder's once it is.)
        if (key === Symbol.hasInstance && !isReady()) return notYet;
        const t = target();
        if (t === placeholder && typeof key === "string" && key !== "then" && !key.startsWith("__") && !(key in placeholder)) {
          // A static of a class not loaded yet (`IndexedDbArtifactStore.open`):
          // calling it loads the module or throws NOT_INITIALIZED, as
          // constructing one does.
          return function (...args) {
            ready(`${name}.${key}`);
            return Reflect.apply(real.get(name)[key], real.get(name), args);
          };
        }
        // The stand-in is the receiver of no static: each runs on the class.
        return Reflect.get(t, key);
      },
      set(_placeholder, key, value) {
        return Reflect.set(target(), key, value);
      },
      has(_placeholder, key) {
        return Reflect.has(target(), key);
      },
      ownKeys() {
        return Reflect.ownKeys(target());
      },
      getOwnPropertyDescriptor(_placeholder, key) {
        const t = target();
        const d = Reflect.getOwnPropertyDescriptor(t, key);
        // The placeholder's `prototype` is writable and cannot be
        // configured: a class's (not writable) is reported as the proxy
        // must report it.
        if (key === "prototype" && d !== undefined) return { ...d, writable: true, configurable: false };
        if (d !== undefined && t !== placeholder && !d.configurable && Reflect.getOwnPropertyDescriptor(placeholder, key) === undefined) {
          return { ...d, configurable: true };
        }
        return d;
      },
      defineProperty(_placeholder, key, descriptor) {
        if (key === "prototype") return false;
        return Reflect.defineProperty(target(), key, descriptor);
      },
      deleteProperty(_placeholder, key) {
        if (key === "prototype") return false;
        return Reflect.deleteProperty(target(), key);
      },
    });
    standIns.set(name, { placeholder, standIn });
    return standIn;
  }

  for (const name of classes) lazyClass(name);
  /** The stand-in of each class, by name. */
  const exported = Object.fromEntries([...standIns].map(([name, s]) => [name, s.standIn]));

  return { classes: exported, init, initSync, setLoader, isReady, setGlue: glue.set };
}
