// The one WebAssembly instance behind both entries, and what happens when it
// cannot go on.
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
// Before `init()` (web entry), constructors and functions throw NOT_INITIALIZED.
// The wrapped API is in ./api.js.
import * as glue from "../pkg/context_compiler.js";
import { codedError } from "./coded.js";
import { schemaEngine } from "./schema.js";

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

/**
 * The host's SHA-256, set by the entry: `sha256(bytes)` returns the digest
 * or a promise of it, `sha256Sync(bytes)` the digest; either may be absent,
 * and Rust then hashes with `sha2` (src/js/hash.rs).
 */
const hashing = { sha256: undefined, sha256Sync: undefined };

/** Sets the host's SHA-256 functions (called by the entry at load). */
export function setHashing({ sha256, sha256Sync }) {
  hashing.sha256 = sha256;
  hashing.sha256Sync = sha256Sync;
}

/** Opens the host's file system under a directory (set by the Node entry). */
let openFiles;

/** Sets the host's file system for `FsArtifactStore` (called by the entry at load). */
export function setFiles(open) {
  openFiles = open;
}

const host = {
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
  schemaEngine,
  sha256(bytes) {
    return hashing.sha256?.(bytes);
  },
  sha256Sync(bytes) {
    return hashing.sha256Sync?.(bytes);
  },
  files(baseDir) {
    return openFiles?.(baseDir);
  },
};

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

function memoryMiB() {
  const bytes = state.exports?.memory?.buffer?.byteLength;
  return bytes === undefined ? "unknown" : `${Math.round(bytes / 1048576)} MiB`;
}

/** Poisons the instance after `e` escaped from it; returns the error for the call that trapped. */
function trapped(e) {
  const cause = state.cause;
  let code;
  let what;
  if (cause?.code === "OUT_OF_MEMORY") {
    code = "OUT_OF_MEMORY";
    what = `out of memory: an allocation of ${cause.bytes} bytes failed (wasm memory: ${memoryMiB()})`;
  } else if (cause?.code === "INTERNAL_PANIC") {
    code = "INTERNAL_PANIC";
    what = `internal error: ${cause.message}`;
  } else {
    code = "INTERNAL_PANIC";
    what = `the WebAssembly instance trapped: ${e?.message ?? String(e)}`;
  }
  if (state.poisoned === null) {
    state.poisoned = codedError(
      "MODULE_POISONED",
      `this WebAssembly instance stopped after ${code} (${what}); its objects can no longer be used: load the package again in a new worker or process`,
      e,
    );
    for (const reject of pending.values()) reject(poisonedError());
    pending.clear();
  }
  return codedError(code, `${what}; this instance is now closed (later calls throw MODULE_POISONED)`, e);
}

function isTrap(e) {
  return (
    e instanceof WebAssembly.RuntimeError ||
    (e instanceof RangeError && /maximum call stack/i.test(e.message))
  );
}

function poisonedError() {
  return codedError(state.poisoned.code, state.poisoned.message.replace(/^agent-context-compiler: /, ""), state.poisoned.cause);
}

function notInitialized(name) {
  return codedError(
    "NOT_INITIALIZED",
    `${name} was used before initialisation; call \`await init()\` (or \`initSync(module)\`) first`,
  );
}

/** Wraps `fn` (a glue method, accessor or function): poison and readiness checks, traps turned into coded errors. */
export function guarded(fn, name, { release = false, needsReady = false } = {}) {
  const wrapper = function (...args) {
    if (state.poisoned !== null) {
      if (release) return undefined;
      throw poisonedError();
    }
    if (needsReady && !state.ready) throw notInitialized(name);
    state.cause = null;
    try {
      return new.target === undefined ? fn.apply(this, args) : Reflect.construct(fn, args, new.target);
    } catch (e) {
      throw isTrap(e) ? trapped(e) : e;
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
export function guardClass(Class) {
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

/** Called by an entry once the module is instantiated; `exports` are the wasm exports. */
export function markReady(exports) {
  if (state.ready) return;
  state.exports = exports;
  glue.__installHost(host);
  state.ready = true;
}

/** Whether the instance is ready. */
export function isReady() {
  return state.ready;
}
