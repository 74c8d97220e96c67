// Node entry: loads the wasm synchronously from the package, ready on import.
import { readFileSync } from "node:fs";
import { initSync as initGlue } from "../pkg/context_compiler.js";
import { markReady } from "./instance.js";

markReady(initGlue({ module: readFileSync(new URL("../pkg/context_compiler_bg.wasm", import.meta.url)) }));

export * from "./api.js";
export * from "./constants.js";

/** Already initialised in Node; kept so code written for the web entry runs unchanged. */
export async function init() {}
/** Already initialised in Node; kept so code written for the web entry runs unchanged. */
export function initSync() {}
