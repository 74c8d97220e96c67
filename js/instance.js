// The main WebAssembly instance behind both entries (sessions, compilers,
// tools, the in-memory store, memory), guarded by ./module-guard.js: a trap closes it
// and every later call throws MODULE_POISONED. Before `init()` (web entries),
// constructors and functions throw NOT_INITIALIZED. The wrapped API is in
// ./api.js.
import * as glue from "../pkg/context_compiler.js";
import { codedError } from "./coded.js";
import { createGuard } from "./module-guard.js";
import { schemaEngine } from "./schema.js";
import { traceContext } from "./tracing.js";

/**
 * The host's SHA-256, set by the entry: `sha256(bytes)` returns the digest
 * or a promise of it, `sha256Sync(bytes)` the digest; either may be absent,
 * and Rust then hashes with `sha2` (crates/js/src/hash.rs).
 */
export const hashing = { sha256: undefined, sha256Sync: undefined };

/** Sets the host's SHA-256 functions (called by the entry at load). */
export function setHashing({ sha256, sha256Sync }) {
  hashing.sha256 = sha256;
  hashing.sha256Sync = sha256Sync;
}

const guard = createGuard({
  glue,
  host: {
    schemaEngine,
    traceContext,
    sha256(bytes) {
      return hashing.sha256?.(bytes);
    },
    sha256Sync(bytes) {
      return hashing.sha256Sync?.(bytes);
    },
  },
  what: "this WebAssembly instance",
  whenPoisoned: "its objects can no longer be used: load the package again in a new worker or process",
  whenNotReady(name) {
    throw codedError(
      "NOT_INITIALIZED",
      `${name} was used before initialisation; call \`await init()\` (or \`initSync({ main })\`) first`,
    );
  },
});

export const { guarded, guardClass, markReady, isReady } = guard;
