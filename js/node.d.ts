export * from "../pkg/context_compiler.js";
export * from "./constants.js";
/** Already initialised in Node; a no-op kept for code shared with the web entry. */
export function init(input?: unknown): Promise<void>;
/** Already initialised in Node; a no-op kept for code shared with the web entry. */
export function initSync(input?: unknown): void;
