// The event-bus module: `EventBus` and its background handlers
// (`SessionTimeoutMonitor`, `EpisodeSummarizer`, `FactExtractor`,
// `SleepHandler`) in a wasm module of their own (`crates/bus-wasm`), so
// that code that never uses the bus never downloads it, nor its glue. The
// Node entry loads both synchronously when the first of these classes is
// made; the web entries' `init()` loads them with the others (./init.js).
//
// It is a second instance with its own memory, tasks and guard: a trap in
// it closes the bus module only (later bus calls throw MODULE_POISONED) and
// the main module goes on. Its objects reach the main module's only through
// their JS methods (a session feeds a bus through `tryEmit`; handlers read
// and write an `InMemoryBackend` or `PersistentMemory` through `recall`,
// `put`, `delete` and `list`).
import { esmRequire } from "./lazy-glue.js";
import { createLazyModule } from "./lazy-module.js";

const bus = createLazyModule({
  importGlue: () => import("../pkg/context_compiler_bus.js"),
  requireGlue: () => esmRequire(import.meta.url)?.("../pkg/context_compiler_bus.js") ?? null,
  classes: ["EpisodeSummarizer", "EventBus", "FactExtractor", "SessionTimeoutMonitor", "SleepHandler"],
  what: "the event-bus module",
  whenPoisoned:
    "its buses and handlers can no longer be used (sessions, compilers and stores go on): load the package again to use the bus",
  notInitialized: (name) =>
    `${name} is in the event-bus module, which is not loaded: \`await init()\` loads it unless \`modules\` leaves "bus" out (then \`await init({ modules: ["bus"] })\`, or \`initSync({ main, bus })\`)`,
});

/** Sets how the Node entry loads the module on first use (bytes, synchronously). */
export const setBusLoader = bus.setLoader;
/** Hands in the module's glue, imported by an entry that imports it statically. */
export const setBusGlue = bus.setGlue;
/**
 * Loads the event-bus module. `input` is a URL, a `Response`, bytes, or a
 * `WebAssembly.Module`; by default the `.wasm` next to the glue is fetched.
 */
export const initBus = bus.init;
/** Loads the event-bus module synchronously from bytes or a `WebAssembly.Module`. */
export const initBusSync = bus.initSync;

export const { EpisodeSummarizer, EventBus, FactExtractor, SessionTimeoutMonitor, SleepHandler } = bus.classes;
