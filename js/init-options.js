// The options of `init` (./init.js), checked the same way by every entry.
import { codedError } from "./coded.js";

/** The modules `init` loads besides the main one unless `modules` says otherwise. */
export const OPTIONAL_MODULES = Object.freeze(["bus", "stores", "schemas"]);

function invalid(message) {
  return codedError("INVALID_ARGUMENT", message);
}

function isPlainObject(value) {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The checked `modules` of an `init` options object. */
function checkedModules(modules) {
  if (modules === undefined) return OPTIONAL_MODULES;
  if (!Array.isArray(modules)) throw invalid(`init: options.modules must be an array of ${OPTIONAL_MODULES.map((m) => `"${m}"`).join(", ")}`);
  for (const m of modules) {
    if (!OPTIONAL_MODULES.includes(m)) {
      throw invalid(`init: options.modules has ${JSON.stringify(m)}; the optional modules are ${OPTIONAL_MODULES.map((n) => `"${n}"`).join(", ")} (the main module always loads)`);
    }
  }
  return [...new Set(modules)];
}

/** The checked options of `init`: `{ modules, wasm }`. */
export function checkedOptions(options, withWasm = true) {
  if (options === undefined || options === null) return { modules: OPTIONAL_MODULES, wasm: {} };
  if (!isPlainObject(options)) {
    throw invalid("init takes an options object { modules?, wasm? } (a module's location goes in options.wasm, e.g. { wasm: { main: url } })");
  }
  const keys = withWasm ? ["modules", "wasm"] : ["modules"];
  for (const k of Object.keys(options)) {
    if (!keys.includes(k)) throw invalid(`init: unknown option ${JSON.stringify(k)} (it takes ${keys.join(", ")})`);
  }
  const wasm = options.wasm ?? {};
  if (!isPlainObject(wasm)) throw invalid("init: options.wasm must be an object { main?, bus?, stores?, schemas? }");
  for (const k of Object.keys(wasm)) {
    if (k !== "main" && !OPTIONAL_MODULES.includes(k)) throw invalid(`init: options.wasm has an unknown module ${JSON.stringify(k)}`);
  }
  return { modules: checkedModules(options.modules), wasm };
}


/** Checks the argument of `initSync`: `{ main?, bus?, stores?, schemas? }`. */
export function checkedSyncModules(modules) {
  if (!isPlainObject(modules)) {
    throw invalid("initSync takes { main, bus?, stores?, schemas? }: each a module's bytes or a compiled WebAssembly.Module");
  }
  for (const k of Object.keys(modules)) {
    if (k !== "main" && !OPTIONAL_MODULES.includes(k)) throw invalid(`initSync: unknown module ${JSON.stringify(k)} (it takes main, ${OPTIONAL_MODULES.join(", ")})`);
  }
  return modules;
}
