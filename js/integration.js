// What the framework integrations (./ai-sdk.js, ./langchain.js,
// ./openai-agents.js) share: their options checked the same way, the
// session of a thread, the look-back tools and what a compile reports. It
// imports nothing that loads the WebAssembly instance.
import { codedError } from "./coded.js";
import { unknownOption } from "./module-guard.js";
import { OPTION_KEYS } from "./option-keys.js";

/** The compile options an integration passes on (the format and tools are its own; `tracer` among them). */
const COMPILE_KEYS = OPTION_KEYS["ContextCompiler.compile"][0][1].filter((k) => !["format", "tools", "toolDefinitions"].includes(k));
const KEYS = ["session", "compiler", "budget", "store", ...COMPILE_KEYS];

/** Whether `value` looks like a `Session` of this package. */
const isSession = (value) => value !== null && typeof value === "object" && typeof value.record === "function";

/**
 * `options` of the integration `name` checked: an object with only known
 * keys (a misspelt one is `INVALID_ARGUMENT` naming the closest), a
 * `session` (or, with `perThread`, a function of the thread's id), a
 * `compiler` and a `budget`. Returns them with `store` and the compile's
 * own options apart; `own` names options of the integration itself, left
 * out of the compile's (read them from `options`).
 */
export function integrationOptions(name, options, { perThread, own = [] }) {
  if (options === null || typeof options !== "object") throw codedError("INVALID_ARGUMENT", `${name} takes { session, compiler, budget, ... }`);
  const typo = unknownOption(name, options, [...KEYS, ...own]);
  if (typo) throw typo;
  const { session, compiler, budget, store, ...rest } = options;
  const compileOptions = Object.fromEntries(Object.entries(rest).filter(([k]) => !own.includes(k)));
  if (!isSession(session) && !(perThread && typeof session === "function")) {
    throw codedError("INVALID_ARGUMENT", `${name}: session must be a Session${perThread ? " or a function of the thread's id giving one" : ""}`);
  }
  if (compiler === null || typeof compiler?.compile !== "function") throw codedError("INVALID_ARGUMENT", `${name}: compiler must be a ContextCompiler`);
  if (budget === undefined) throw codedError("INVALID_ARGUMENT", `${name}: budget is required`);
  if (store !== undefined && (store === null || typeof store.loadSession !== "function")) {
    throw codedError("INVALID_ARGUMENT", `${name}: store must be a store with saveSession and loadSession (the one session.sync takes)`);
  }
  return { session, compiler, budget, store, compileOptions };
}

/**
 * The integration `name`'s `artifactStore` and `lookBackTools` options
 * checked: the store the look-back tools read (the attacher's or the tool
 * handler's), and whether they are offered (default `true`).
 */
export function lookBackOptions(name, options) {
  const { artifactStore, lookBackTools = true } = options;
  if (artifactStore !== undefined && (artifactStore === null || typeof artifactStore.retrieve !== "function")) {
    throw codedError("INVALID_ARGUMENT", `${name}: artifactStore must be an artifact store (the ArtifactAttacher's)`);
  }
  if (typeof lookBackTools !== "boolean") throw codedError("INVALID_ARGUMENT", `${name}: lookBackTools must be a boolean`);
  return { artifactStore, lookBackTools };
}

/**
 * The session of thread `id` for the integration `name`: what the
 * function `session` gives, else the one `store` saved under `id`. A thread
 * neither knows is `INVALID_ARGUMENT` naming it.
 */
export async function threadSession(name, session, store, id) {
  const given = await session(id);
  if (isSession(given)) return given;
  if (given !== undefined && given !== null) throw codedError("INVALID_ARGUMENT", `${name}: the session function gave something that is not a Session for the thread ${JSON.stringify(id)}`);
  const saved = store === undefined ? null : await store.loadSession(id);
  if (isSession(saved)) return saved;
  const where = store === undefined ? "and there is no store to load it from" : "and the store has no session saved under it";
  throw codedError("INVALID_ARGUMENT", `${name}: no session for the thread ${JSON.stringify(id)}: the session function gave none ${where}`);
}

/** What a compile held and repeated, as the integrations hand it over: its ledger and cache report. */
export const compiledMetadata = (ctx) => ({ ledger: ctx.ledger, cache: ctx.cache });

/** The key under which the integrations hand a compile's metadata over. */
export const METADATA_KEY = "agentContextCompiler";

/**
 * The `{ ledger, cache }` a model call's compile reported, from an AI SDK
 * `generateText` result or step (`providerMetadata`; a `streamText`
 * result's is a promise: pass `{ providerMetadata: await
 * result.providerMetadata }` or a step) or a LangChain message
 * (`response_metadata`); `undefined` when it has none.
 */
export function compileMetadata(result) {
  const found = result?.providerMetadata?.[METADATA_KEY] ?? result?.response_metadata?.[METADATA_KEY];
  return found !== null && typeof found === "object" && "ledger" in found ? found : undefined;
}

/**
 * The look-back tools (`search_history`, `read_artifact`), as
 * `lookBackToolDefinitions()` gives them (tests/js/look_back.test.mjs
 * holds the two equal).
 */
export const LOOK_BACK_TOOLS = [
  {
    name: "search_history",
    description: "Search everything said earlier in this conversation, including turns and tool outputs no longer shown. Returns the best matching events with their time and text.",
    parameters: {
      type: "object",
      properties: {
        query: { type: "string", description: "Words to look for: names, numbers, dates, paths, topics." },
        limit: { type: "integer", minimum: 1, maximum: 20, description: "Results at most (default 5)." },
      },
      required: ["query"],
      additionalProperties: false,
    },
  },
  {
    name: "read_artifact",
    description: "Read part of a stored tool output by its handle (shown in brackets where an output was stored instead of shown), or the whole text of a message cut short or a search_history result by its session event id. Returns the text from offset (bytes) and the offset to read next.",
    parameters: {
      type: "object",
      properties: {
        handle: { type: "string", description: "The stored output's handle, or a session event id." },
        offset: { type: "integer", minimum: 0, description: "Byte offset to start at (default 0)." },
        length: { type: "integer", minimum: 1, maximum: 16384, description: "Bytes to read (default 4096)." },
      },
      required: ["handle"],
      additionalProperties: false,
    },
  },
];

/** Whether `name` is one of the look-back tools. */
export const isLookBack = (name) => LOOK_BACK_TOOLS.some((t) => t.name === name);

/** Whether two JSON values are equal, whatever the order of their keys. */
export function sameJson(a, b) {
  const canonical = (v) => (Array.isArray(v) ? v.map(canonical) : v !== null && typeof v === "object" ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical(v[k])])) : v);
  return JSON.stringify(canonical(a ?? null)) === JSON.stringify(canonical(b ?? null));
}

/**
 * The approvals `events` (a session's log) hold, by call id: whether the
 * call was requested, its standing decision (the first recorded) and its
 * recorded arguments (the latest `tool_call` under the id).
 */
export function approvalsIn(events) {
  const approvals = new Map();
  const of = (id) => approvals.get(id) ?? approvals.set(id, { requested: false, decision: undefined, arguments: undefined }).get(id);
  for (const e of events) {
    const id = e.data?.call_id;
    if (typeof id !== "string") continue;
    if (e.kind === "tool_call") of(id).arguments = e.data.arguments;
    else if (e.kind === "approval_requested") of(id).requested = true;
    else if (e.kind === "approval_decided" && of(id).decision === undefined) of(id).decision = e.data;
  }
  return approvals;
}

/** The calls `session` holds pending (requested, not decided), by call id: `{ callId, name, arguments, eventId }`. */
export const pendingCalls = (session) => new Map(session.pendingApprovals().map((p) => [p.callId, p]));

/**
 * Records `decision` for the call `callId` when `session` holds it pending
 * (requested, not decided); an approval with `args` other than the call's
 * recorded arguments is recorded as an edit. Returns the event, or `null`
 * when the call is not pending (decided already, or never requested).
 */
export function decideIfPending(session, callId, decision, pending = pendingCalls(session)) {
  if (!pending.has(callId)) return null;
  pending.delete(callId);
  return session.decideApproval(callId, decision);
}

/** The decision of an approved call run with `args`: an edit when they differ from `requested`. */
export const approvedWith = (args, requested) => (args === undefined || sameJson(args, requested) ? { approve: true } : { approve: true, args });
