// What happens when one of the package's WebAssembly instances cannot go on,
// for any of them: the main module (./instance.js) and the event-bus module
// (./bus.js) each get a guard of their own, so a trap in one closes that one.
//
// Release builds abort on a panic, and a failed allocation aborts too; in
// wasm an abort is a trap that leaves the call without running destructors,
// so the instance can no longer be trusted. Every class and function the
// entries export is wrapped here so that:
// - the call that traps throws a ContextCompilerError coded OUT_OF_MEMORY
//   (with the size asked for) or INTERNAL_PANIC (with the panic message),
//   instead of a bare "RuntimeError: unreachable";
// - every later call throws MODULE_POISONED, every promise still pending
//   rejects with MODULE_POISONED (none hangs), and `free()` does nothing;
// - async work runs from guarded microtasks (`__runTasks`), so a trap inside
//   it poisons the instance instead of ending the process as an uncaught
//   exception.
// Before the instance is ready, constructors and functions call `whenNotReady`,
// which loads it or throws NOT_INITIALIZED.
import { codedError } from "./coded.js";
import { OPTION_KEYS } from "./option-keys.js";

/** Edit distance between `a` and `b`, compared without case and underscores. */
function distance(a, b) {
  const x = a.toLowerCase().replaceAll("_", "");
  const y = b.toLowerCase().replaceAll("_", "");
  let row = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const next = [i];
    for (let j = 1; j <= y.length; j++) next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1));
    row = next;
  }
  return row[y.length];
}

/**
 * `INVALID_ARGUMENT` for the first key of `options` that `keys` (what the
 * declarations say `name` takes) does not name, with the closest known
 * key; `null` when there is none or `options` is not a plain object. Options
 * that cannot be read (a revoked `Proxy`, one whose traps throw) are
 * `INVALID_ARGUMENT` too.
 */
export function unknownOption(name, options, keys) {
  if (options === null || typeof options !== "object") return null;
  let own;
  try {
    const proto = Object.getPrototypeOf(options);
    if (proto !== Object.prototype && proto !== null) return null;
    own = Object.keys(options);
  } catch (e) {
    return codedError("INVALID_ARGUMENT", `${name}: the options could not be read (${e?.message ?? String(e)})`, e);
  }
  const key = own.find((k) => !keys.includes(k));
  if (key === undefined) return null;
  const [closest] = keys.map((k) => [k, distance(key, k)]).sort((a, b) => a[1] - b[1]);
  const hint = closest && closest[1] <= Math.max(2, Math.floor(key.length / 3)) ? `; did you mean ${closest[0]}?` : "";
  return codedError("INVALID_ARGUMENT", `${name}: unknown option ${key}${hint} (it takes ${keys.join(", ")})`);
}

/**
 * `INVALID_ARGUMENT` for the first unknown key of an options object among
 * `args`, the arguments of the constructor or function `name` (which returns
 * no promise); `null` when there is none.
 */
export function unknownOptions(name, args) {
  for (const [index, keys] of OPTION_KEYS[name] ?? []) {
    const e = unknownOption(name, args[index], keys);
    if (e !== null) return e;
  }
  return null;
}

/**
 * The coded error for what the wasm-bindgen glue throws itself, before or
 * instead of calling into the instance, when `name` was called with the
 * wrong kind of object: an instance of another class (`_assertClass`), or a
 * freed object (Rust's "null pointer passed to rust"); `null` for anything
 * else. Neither touches the instance, which stays usable.
 */
function glueArgumentError(e, name) {
  if (!(e instanceof Error) || e.code !== undefined) return null;
  const wanted = /^expected instance of (\w+)$/.exec(e.message);
  if (wanted !== null) {
    return codedError("INVALID_ARGUMENT", `${name}: an argument must be a ${wanted[1]} of this package`, e);
  }
  if (e.message === "null pointer passed to rust") {
    return codedError("INVALID_ARGUMENT", `${name}: the object was freed (free() was called on it, or on an object it was passed as)`, e);
  }
  return null;
}

function isTrap(e) {
  return (
    e instanceof WebAssembly.RuntimeError ||
    (e instanceof RangeError && /maximum call stack/i.test(e.message))
  );
}

/**
 * A guard for one instance of `glue` (a wasm-bindgen `--target web` glue).
 * `host` holds what that module's Rust asks of the host beyond its task
 * queue; `what` names the instance in messages ("this WebAssembly
 * instance"); `whenPoisoned` says what to do after a trap; `whenNotReady(name)`
 * runs when `name` is used before `markReady`: it either makes the instance
 * ready (a synchronous loader) or throws.
 */
export function createGuard({ glue, host = {}, what, whenPoisoned, whenNotReady }) {
  const state = {
    ready: false,
    /** The wasm exports, once instantiated (for the memory size in messages). */
    exports: null,
    /** Why the instance is about to trap, noted by Rust before it does. */
    cause: null,
    /** The MODULE_POISONED error, once the instance has trapped. */
    poisoned: null,
  };
  /** The `reject` of every promise whose task has not settled, by task id. */
  const pending = new Map();

  function runTasks() {
    if (state.poisoned !== null) return;
    state.cause = null;
    try {
      glue.__runTasks();
    } catch (e) {
      // A trap inside a task: its caller, like every caller still waiting,
      // gets MODULE_POISONED.
      trapped(e);
    }
  }

  const fullHost = {
    ...host,
    schedule() {
      queueMicrotask(runTasks);
    },
    fatal(code, message, bytes) {
      state.cause = { code, message, bytes };
    },
    open(id, reject) {
      pending.set(id, reject);
    },
    close(id) {
      pending.delete(id);
    },
  };

  function memoryMiB() {
    const bytes = state.exports?.memory?.buffer?.byteLength;
    return bytes === undefined ? "unknown" : `${Math.round(bytes / 1048576)} MiB`;
  }

  function poisonedError() {
    return codedError(state.poisoned.code, state.poisoned.message.replace(/^agent-context-compiler: /, ""), state.poisoned.cause);
  }

  /** Poisons the instance after `e` escaped from it; returns the error for the call that trapped. */
  function trapped(e) {
    const cause = state.cause;
    let code;
    let why;
    if (cause?.code === "OUT_OF_MEMORY") {
      code = "OUT_OF_MEMORY";
      why = `out of memory: an allocation of ${cause.bytes} bytes failed (wasm memory: ${memoryMiB()})`;
    } else if (cause?.code === "INTERNAL_PANIC") {
      code = "INTERNAL_PANIC";
      why = `internal error: ${cause.message}`;
    } else {
      code = "INTERNAL_PANIC";
      why = `the WebAssembly instance trapped: ${e?.message ?? String(e)}`;
    }
    if (state.poisoned === null) {
      state.poisoned = codedError(
        "MODULE_POISONED",
        `${what} stopped after ${code} (${why}); ${whenPoisoned}`,
        e,
      );
      for (const reject of pending.values()) reject(poisonedError());
      pending.clear();
    }
    return codedError(code, `${why}; ${what} is now closed (later calls throw MODULE_POISONED)`, e);
  }

  /** Wraps `fn` (a glue method, accessor or function): poison and readiness checks, traps turned into coded errors. */
  function guarded(fn, name, { release = false, needsReady = false } = {}) {
    const optionKeys = OPTION_KEYS[name] ?? [];
    const wrapper = function (...args) {
      if (state.poisoned !== null) {
        if (release) return undefined;
        throw poisonedError();
      }
      // A misspelt option is an error, not a default silently kept.
      for (const [index, keys, async] of optionKeys) {
        const e = unknownOption(name, args[index], keys);
        if (e !== null) {
          if (async) return Promise.reject(e);
          throw e;
        }
      }
      if (needsReady && !state.ready) whenNotReady(name);
      state.cause = null;
      try {
        return new.target === undefined ? fn.apply(this, args) : Reflect.construct(fn, args, new.target);
      } catch (e) {
        throw isTrap(e) ? trapped(e) : (glueArgumentError(e, name) ?? e);
      }
    };
    Object.defineProperty(wrapper, "name", { value: fn.name });
    return wrapper;
  }

  /** Wraps the own methods and accessors of `target` in place, but not the glue's `__` internals. */
  function guardMembers(target, Class, skip) {
    for (const key of Reflect.ownKeys(target)) {
      if (skip.has(key) || (typeof key === "string" && key.startsWith("__"))) continue;
      const d = Object.getOwnPropertyDescriptor(target, key);
      const options = { release: key === "free" || key === Symbol.dispose, needsReady: target === Class };
      const label = `${Class.name}.${String(key)}`;
      if (typeof d.value === "function") d.value = guarded(d.value, label, options);
      if (d.get) d.get = guarded(d.get, label, options);
      if (d.set) d.set = guarded(d.set, label, options);
      Object.defineProperty(target, key, d);
    }
  }

  /** Wraps a glue class: its members in place, its constructor through a proxy. */
  function guardClass(Class) {
    guardMembers(Class.prototype, Class, new Set(["constructor"]));
    guardMembers(Class, Class, new Set(["length", "name", "prototype"]));
    const construct = guarded(Class, Class.name, { needsReady: true });
    // A proxy keeps the class itself (instanceof, statics, subclassing).
    return new Proxy(Class, {
      construct(_target, args, newTarget) {
        return Reflect.construct(construct, args, newTarget);
      },
    });
  }

  /** Called once the module is instantiated; `exports` are the wasm exports. */
  function markReady(exports) {
    if (state.ready) return;
    state.exports = exports;
    glue.__installHost(fullHost);
    state.ready = true;
  }

  /** Whether the instance is ready. */
  function isReady() {
    return state.ready;
  }

  return { guarded, guardClass, markReady, isReady };
}
