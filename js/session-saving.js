// What the stores module asks of the main module's sessions
// (crates/npm-wasm/src/session_saving.rs): a store in the other instance reads a session
// to save through its hidden `__eventCount`, `__eventId` and `__eventsJson`,
// and has a loaded session made by `Session.__restore`. The guard leaves the
// glue's `__` internals alone, so these are guarded here, before the class
// is: a trap inside one closes the main module as any other call would, and
// once it is closed they throw MODULE_POISONED, which the store's call
// rejects with.
import * as glue from "../pkg/context_compiler.js";
import { codedError } from "./coded.js";
import { guarded } from "./instance.js";

for (const name of ["__eventCount", "__eventId", "__eventsJson"]) {
  glue.Session.prototype[name] = guarded(glue.Session.prototype[name], `Session.${name}`);
}

/** The host's `restoreSession` for the stores module: a main-module `Session` from saved events. */
export const restoreSession = guarded(glue.Session.__restore, "Session.__restore", { needsReady: true });

for (const name of ["__mergeSaved", "__mergeSavedTail", "__savedPrefix", "__noteSaved", "__syncPace", "__noteSync"]) {
  glue.Session.prototype[name] = guarded(glue.Session.prototype[name], `Session.${name}`);
}
const retryDelayMs = guarded(glue.Session.__retryDelayMs, "Session.__retryDelayMs");
const leasePollMs = guarded(glue.Session.__leasePollMs, "Session.__leasePollMs");

/** After how many lost saves a sync takes the session's lease, and for how long (src/session/lease.rs). */
const LEASE_AFTER_LOSSES = 2;
const LEASE_MS = 2000;

/** `session.sync`'s defaults (`SyncOptions` in src/session/sync.rs). */
const SYNC_DEFAULTS = { maxTries: 8, baseDelayMs: 10, maxDelayMs: 1000 };

/** `options` of `session.sync`, checked, over the defaults. */
function syncOptions(options) {
  if (options === undefined || options === null) return SYNC_DEFAULTS;
  if (typeof options !== "object") throw codedError("INVALID_ARGUMENT", "sync options must be an object");
  const out = { ...SYNC_DEFAULTS };
  for (const key of Object.keys(options)) {
    if (!(key in SYNC_DEFAULTS)) throw codedError("INVALID_ARGUMENT", `sync options: unknown option ${key}`);
    const v = options[key];
    if (v === undefined) continue;
    const ok = key === "maxTries" ? Number.isInteger(v) && v >= 1 && v <= 1000 : typeof v === "number" && Number.isFinite(v) && v >= 0;
    if (!ok) throw codedError("INVALID_ARGUMENT", `sync options: ${key} must be ${key === "maxTries" ? "an integer from 1 to 1000" : "a finite number of ms, 0 or more"}`);
    out[key] = v;
  }
  return out;
}

/**
 * Merges into `session` what other writers saved to `store` since the
 * events the session knows it holds: only those (`__loadEventsAfter`), or
 * the whole saved session from a store without that method. How many
 * saved events were new.
 */
async function mergeWhatIsNew(session, store, id) {
  if (typeof store.__loadEventsAfter === "function") {
    const [known, lastEventId] = session.__savedPrefix();
    const tail = await store.__loadEventsAfter(id, known, lastEventId);
    return tail === null ? 0 : session.__mergeSavedTail(tail.eventsJson, tail.start, tail.expected);
  }
  const saved = await store.loadSession(id);
  if (saved === null || saved === undefined) return 0;
  try {
    return session.__mergeSaved(saved);
  } finally {
    saved.free();
  }
}

/** One try of a sync's save: the store's own (leases respected), or a plain save's outcome. */
async function trySave(store, session, writer) {
  if (typeof store.__trySave === "function") return store.__trySave(session, writer);
  try {
    return { outcome: "saved", report: await store.saveSession(session) };
  } catch (e) {
    if (e?.code !== "STORE_CONFLICT") throw e;
    return { outcome: "lost", error: e };
  }
}

let writers = 0;

/**
 * `session.sync(store, options)`: saves the session to a store other writers
 * save it to as well. On `STORE_CONFLICT` it waits a jittered backoff, loads
 * what they saved since its last save and places it before this session's
 * own unsaved events (`mergeWhatIsNew`), and saves again, at most
 * `maxTries` times; then it rejects with `STORE_CONFLICT`, its own events
 * unsaved for the next sync. After two lost saves it takes the session's
 * lease where the store keeps one (its next save cannot lose); a save that
 * meets another's lease waits for it, which is no try. A session whose
 * syncs lately had to contend waits before its first save too
 * (`Session::sync_pace` in the core). The loop of `sync_session` in the
 * core, over a store of the other WebAssembly instance.
 */
async function sync(store, options) {
  const { maxTries, baseDelayMs, maxDelayMs } = syncOptions(options);
  if (store === null || typeof store !== "object" || typeof store.saveSession !== "function" || typeof store.loadSession !== "function") {
    throw codedError("INVALID_ARGUMENT", "sync takes a store with saveSession and loadSession");
  }
  const id = this.sessionId;
  const writer = `${Math.random().toString(16).slice(2, 10)}-${writers++}`;
  let merged = 0;
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const wait = (next) => sleep(retryDelayMs(next, Math.random(), baseDelayMs, maxDelayMs));
  // Waits on other writers' leases: no try, but bounded in all.
  let waitedMs = 0;
  let waits = 0;
  const waitLease = async (remaining) => {
    if (waitedMs >= LEASE_MS * maxTries) {
      throw codedError("STORE_CONFLICT", `session ${id}: waited ${Math.round(waitedMs)} ms on other writers' leases; the session holds every event, its own unsaved: sync again`);
    }
    const ms = leasePollMs(waits++, Math.random(), remaining ?? undefined);
    waitedMs += ms;
    await sleep(ms);
  };
  /** Takes the lease, waiting while another holds it; false where the store keeps none. */
  const takeLease = async () => {
    if (typeof store.__takeLease !== "function") return false;
    for (;;) {
      const taken = await store.__takeLease(id, writer, LEASE_MS);
      if (taken.outcome === "taken") return true;
      if (taken.outcome === "unavailable") return false;
      if (taken.outcome === "held") await waitLease(taken.waitMs);
    }
  };
  // Paced as a retry after `pace` conflicts when its syncs lately had to contend.
  const pace = this.__syncPace();
  if (pace > 0) await wait(pace + 1);
  let lost = 0;
  for (let tries = 0; ; ) {
    // What the save holds at least (it reads the session when ready to write).
    const count = this.__eventCount();
    const tried = await trySave(store, this, writer);
    if (tried.outcome === "saved") {
      tries++;
      this.__noteSaved(count);
      this.__noteSync(tries, true);
      return { tries, merged, eventsWritten: tried.report.eventsWritten };
    }
    if (tried.outcome === "leased") {
      // Another writer's turn: no try. Its events go before this session's own.
      await waitLease(tried.waitMs);
      merged += await mergeWhatIsNew(this, store, id);
      continue;
    }
    tries++;
    lost++;
    if (tries >= maxTries) {
      this.__noteSync(tries, false);
      throw codedError("STORE_CONFLICT", `session ${id}: ${maxTries} saves met other writers' saves; the session holds every event, its own unsaved: sync again`, tried.error);
    }
    const leased = lost >= LEASE_AFTER_LOSSES && (await takeLease());
    // Wait first, then load: the merged session is as fresh as can be when saved.
    if (!leased) await wait(tries + 1);
    merged += await mergeWhatIsNew(this, store, id);
  }
}

Object.defineProperty(glue.Session.prototype, "sync", { value: sync, writable: true, configurable: true });
