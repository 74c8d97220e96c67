// What the stores module asks of the main module's sessions
// (crates/npm-wasm/src/session_saving.rs): a store in the other instance reads a session
// to save through its hidden `__eventCount`, `__eventId` and `__eventsJson`,
// and has a loaded session made by `Session.__restore`. The guard leaves the
// glue's `__` internals alone, so these are guarded here, before the class
// is: a trap inside one closes the main module as any other call would, and
// once it is closed they throw MODULE_POISONED, which the store's call
// rejects with.
import * as glue from "../pkg/context_compiler.js";
import { guarded } from "./instance.js";

for (const name of ["__eventCount", "__eventId", "__eventsJson"]) {
  glue.Session.prototype[name] = guarded(glue.Session.prototype[name], `Session.${name}`);
}

/** The host's `restoreSession` for the stores module: a main-module `Session` from saved events. */
export const restoreSession = guarded(glue.Session.__restore, "Session.__restore", { needsReady: true });
