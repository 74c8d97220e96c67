// For the tests only (not in the package): the main module's glue as the
// entries use it, from the chunk they share once bundled
// (scripts/bundle.mjs), so that a test reaches the same instance.
import "./init.js";

export * from "./public.js";
export * as glue from "../pkg/context_compiler.js";
