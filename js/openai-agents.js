// agent-context-compiler/openai-agents: what the OpenAI Agents SDK
// (`@openai/agents`, an optional peer dependency) needs from this package:
// its `Session` interface over this package's session (and store), and the
// `callModelInputFilter` that compiles each model input. It imports nothing
// of the package's main entry, so it never loads a second WebAssembly
// instance: it works on the objects it is given.
import { RunContext, tool } from "@openai/agents";
import { codedError } from "./coded.js";
import { LOOK_BACK_TOOLS, approvalsIn, approvedWith, decideIfPending, integrationOptions, lookBackOptions, pendingCalls } from "./integration.js";

/**
 * The key marking an item this integration rendered (history or a compiled
 * input): a field of the item itself, which the SDK keeps when it persists
 * items and its model converters never send (they copy `providerData` into
 * the request, so the mark is not there).
 */
const MARK = "agentContextCompiler";

/** Whether `item` was rendered here (history or a compiled input). */
const rendered = (item) => item?.[MARK] !== undefined;

/** Marks `item` as rendered here. */
const mark = (item, how) => ({ ...item, [MARK]: how });

/** The text of a message item's content (a string, or text parts). */
function messageText(content) {
  if (typeof content === "string") return content;
  return (content ?? []).map((p) => p.text ?? p.refusal ?? (p.type ? `[${p.type}]` : "")).join("");
}

/** A function call result's output as text. */
function resultText(output) {
  if (typeof output === "string") return output;
  if (output?.type === "text") return output.text;
  if (Array.isArray(output)) return output.map((p) => p.text ?? `[${p.type}]`).join("\n");
  return JSON.stringify(output ?? null);
}

/** A call's arguments as recorded: the JSON text parsed, or kept as text. */
function callArguments(text) {
  if (typeof text !== "string") return text ?? {};
  try {
    return text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    return { arguments: text };
  }
}

/** The session's events as Agents SDK input items, each marked with its event id. */
function historyItems(events) {
  const items = [];
  for (const e of events) {
    const d = e.data ?? {};
    const as = (item) => items.push(mark(item, { eventId: e.eventId }));
    if (e.kind === "user_input") as({ type: "message", role: "user", content: d.text ?? d.content ?? "" });
    else if (e.kind === "assistant_output") as({ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: d.text ?? d.content ?? "" }] });
    else if (e.kind === "tool_call") as({ type: "function_call", callId: d.call_id ?? e.eventId, name: d.tool_name ?? d.tool ?? "unknown", arguments: JSON.stringify(d.arguments ?? {}), status: "completed" });
    else if (["tool_success", "tool_error", "tool_timeout"].includes(e.kind)) {
      as({ type: "function_call_result", callId: d.call_id ?? "", name: d.tool ?? "unknown", status: "completed", output: { type: "text", text: d.result ?? d.error ?? d.summary ?? "" } });
    }
  }
  return items;
}

/** A compiled user content part (Responses' wire shape) as the SDK's. */
function userPart(part) {
  if (part.type === "input_image") return { type: "input_image", image: part.image_url ?? part.file_id ?? "", ...(part.detail && { detail: part.detail }) };
  if (part.type === "input_file") return { type: "input_file", file: part.file_data ?? part.file_url ?? part.file_id ?? "", ...(part.filename && { filename: part.filename }) };
  return part;
}

/**
 * A compiled context's `input` (the Responses API's wire items) as Agents
 * SDK input items: calls and results under `callId` (a result as a
 * `function_call_result` named after its call), assistant text as
 * `output_text` parts. Reasoning items, which the SDK keeps in a shape of
 * its own, are left out.
 */
export function toAgentInputItems(input) {
  const names = new Map();
  const items = [];
  for (const item of input) {
    if (item.type === "function_call") {
      names.set(item.call_id, item.name);
      items.push({ type: "function_call", callId: item.call_id, name: item.name, arguments: item.arguments, status: "completed" });
    } else if (item.type === "function_call_output") {
      const text = typeof item.output === "string" ? item.output : JSON.stringify(item.output);
      items.push({ type: "function_call_result", callId: item.call_id, name: names.get(item.call_id) ?? "unknown", status: "completed", output: { type: "text", text } });
    } else if (item.type === "message" && item.role === "assistant") {
      const text = typeof item.content === "string" ? item.content : item.content.map((p) => p.text ?? "").join("");
      items.push({ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text }] });
    } else if (item.type === "message") {
      items.push({ type: "message", role: item.role, content: typeof item.content === "string" ? item.content : item.content.map(userPart) });
    }
  }
  return items;
}

/** A tool the SDK sends with a call, as the `ToolSpec` a compile counts (hosted tools by their configuration). */
function toolSpec(t) {
  if (t.type === "function") return { name: t.name, description: t.description ?? "", parameters: t.parameters ?? { type: "object" } };
  return { name: t.name ?? t.type ?? "tool", description: JSON.stringify(t.providerData ?? {}), parameters: { type: "object" } };
}

/** The tools the SDK sends with `agent`'s call: its enabled tools (MCP servers' included) and enabled handoffs. */
async function sentTools(agent, context) {
  if (agent === null || typeof agent?.getAllTools !== "function") return [];
  const runContext = new RunContext(context);
  const tools = (await agent.getAllTools(runContext)).map(toolSpec);
  const handoffs = typeof agent.getEnabledHandoffs === "function" ? await agent.getEnabledHandoffs(runContext) : [];
  for (const h of handoffs) tools.push({ name: h.toolName, description: h.toolDescription ?? "", parameters: h.inputJsonSchema ?? { type: "object" } });
  return tools;
}

/**
 * Texts recorded by one side and not yet met by the other, for items with
 * no id (the SDK's protocol lets an assistant message go without one): the
 * filter and `addItems` each record what they see first, and skip it once
 * when the other recorded it.
 */
class Unmatched {
  #mine = [];
  #theirs = [];
  constructor(other) {
    if (other) {
      this.#theirs = other.#mine;
      this.#mine = other.#theirs;
    }
  }
  /** The side that sees from the other end. */
  other() {
    return new Unmatched(this);
  }
  /** Whether `text` is new to this side (recorded by the other: false, once). */
  take(text) {
    const i = this.#theirs.indexOf(text);
    if (i >= 0) {
      this.#theirs.splice(i, 1);
      return false;
    }
    this.#mine.push(text);
    return true;
  }
}

/**
 * The OpenAI Agents SDK's `Session` over this package's `session` (with
 * `store`, synced after every write), the `callModelInputFilter` that
 * compiles every model input from it under `budget` (counting the tools the
 * SDK sends with it), and the look-back `tools` for the agent (`[]` with
 * `lookBackTools: false`): `new Agent({ tools: [...yours, ...tools] })`,
 * `run(agent, input, { session, callModelInputFilter })`. What a run adds
 * is recorded once (calls and results by their `callId`, assistant
 * messages by their id or, without one, once per text; the run's input by
 * the filter, the rest when the SDK persists it); the usage of each model
 * call is read from the run context in `addItems`. Sessions are
 * append-only: `popItem` and `clearSession` reject with `INVALID_ARGUMENT`.
 */
export function agentsSession(options) {
  const { session, compiler, budget, store, compileOptions } = integrationOptions("agentsSession", options, { perThread: false, own: ["onCompile", "artifactStore", "lookBackTools"] });
  const { onCompile } = options;
  const { artifactStore, lookBackTools } = lookBackOptions("agentsSession", options);
  if (onCompile !== undefined && typeof onCompile !== "function") throw codedError("INVALID_ARGUMENT", "agentsSession: onCompile must be a function of the compiled context");

  /**
   * Per call id, the latest call recorded under it (its arguments as JSON)
   * and its result's text once recorded: the same call seen again (a
   * resumed run sends its items again) is recorded once; a call id a
   * provider uses again with other arguments is a new call.
   */
  const latest = new Map();
  /** Ids of the assistant messages recorded. */
  const messages = new Set();
  /**
   * A run's state: the items the filter saw, the id-less texts each side
   * recorded and the usage entries recorded (`done`: those of its model
   * calls before it was first seen here, which a resumed run's state holds).
   */
  const newRun = (done = 0) => {
    const fromFilter = new Unmatched();
    return { cursor: 0, fromFilter, fromAdd: fromFilter.other(), usageRecorded: done, context: undefined };
  };
  /**
   * The runs by their `RunContext`'s usage, which its forks and a resumed
   * state's context share (the SDK reads the history mid-run when it
   * resumes one, and a resumed run may first show up after a model call).
   */
  const runs = new WeakMap();
  /** The token counts of the compiles whose model calls' usage is not recorded yet, in order. */
  let unreported = [];
  /** The run of `runContext`: the one it started, or a new one. */
  function runOf(runContext) {
    if (runContext === null || typeof runContext !== "object") return newRun();
    const key = typeof runContext.usage === "object" && runContext.usage !== null ? runContext.usage : runContext;
    let r = runs.get(key);
    if (r === undefined) {
      // Of its usage entries, the last ones are of the model calls compiled here.
      r = newRun(Math.max(0, (runContext.usage?.requestUsageEntries?.length ?? 0) - unreported.length));
      runs.set(key, r);
    }
    r.context = runContext;
    return r;
  }
  let run = newRun();
  /** Per call id, whether its standing decision approved it. */
  const approved = new Map();
  for (const e of session.eventLog.events) {
    const id = e.data?.call_id;
    if (typeof id !== "string") continue;
    if (e.kind === "tool_call") latest.set(id, { call: JSON.stringify(e.data.arguments ?? {}), result: undefined });
    else if (["tool_success", "tool_error", "tool_timeout"].includes(e.kind)) latest.set(id, { ...latest.get(id), result: e.data.result ?? e.data.error ?? "" });
  }
  for (const [id, a] of approvalsIn(session.eventLog.events)) if (a.decision !== undefined) approved.set(id, a.decision.approve === true);

  /**
   * Records the SDK's decision on the pending call `callId` (named `name`)
   * as `runContext` holds it: an approval, or a rejection with its message.
   * Returns whether the call was approved (`undefined`: not decided) and
   * the event recorded, if any.
   */
  function recordDecision(callId, name, runContext, pending) {
    if (!pending.has(callId)) return { verdict: approved.get(callId) };
    const verdict = runContext?.isToolApproved?.({ toolName: name, callId });
    if (verdict === undefined) return { verdict };
    const reason = verdict ? undefined : runContext.getRejectionMessage?.(name, callId);
    const event = decideIfPending(session, callId, verdict ? approvedWith(undefined) : { approve: false, ...(typeof reason === "string" && { reason }) }, pending);
    approved.set(callId, verdict);
    return { verdict, event };
  }

  /** Whether `item` is a message (not a call or result). */
  const isMessage = (item) => item.type === "message" || (item.role !== undefined && item.type === undefined);
  /** Whether `item`, a call or result, is recorded already. */
  function isRecorded(item) {
    const known = latest.get(item.callId);
    if (item.type === "function_call") return known?.call === JSON.stringify(callArguments(item.arguments));
    return item.type === "function_call_result" && known?.result !== undefined;
  }

  /** Records one item the SDK produced (not one rendered here), `side` being the filter's or addItems' record of id-less texts. */
  function recordItem(item, side) {
    if (item.type === "function_call") {
      const args = callArguments(item.arguments);
      const key = JSON.stringify(args);
      if (latest.get(item.callId)?.call === key) return;
      latest.set(item.callId, { call: key, result: undefined });
      session.record("tool_call", { tool_name: item.name, arguments: args, call_id: item.callId });
    } else if (item.type === "function_call_result") {
      const text = resultText(item.output);
      const known = latest.get(item.callId);
      // (A result read from the log, recorded redacted, is known by its call.)
      if (known?.result !== undefined && (known.raw === undefined || known.raw === text || known.result === text)) return;
      // A call that waited for a person: the decision first; a rejected call's output is its error.
      const pending = pendingCalls(session);
      const { verdict } = recordDecision(item.callId, item.name, run.context, pending);
      const failed = item.status === "incomplete" || verdict === false;
      const event = session.record(failed ? "tool_error" : "tool_success", failed ? { tool: item.name, call_id: item.callId, error: text } : { tool: item.name, call_id: item.callId, result: text });
      latest.set(item.callId, { ...known, result: failed ? event.data.error : event.data.result, raw: text });
    } else if (item.type === "message" || (item.role && item.type === undefined)) {
      const text = messageText(item.content);
      if (item.role === "assistant") {
        if (item.id ? messages.has(item.id) : !side.take(`assistant:${text}`)) return;
        if (item.id) messages.add(item.id);
        if (text !== "") session.record("assistant_output", { text });
      } else if (item.role === "user") {
        if (!side.take(`user:${text}`)) return;
        if (text !== "") session.record("user_input", { text });
      }
    }
  }

  /** Records the usage of the run's model calls not recorded yet. */
  function recordUsage(runContext) {
    const entries = runContext?.usage?.requestUsageEntries ?? [];
    const fresh = entries.length - run.usageRecorded;
    for (let i = run.usageRecorded; i < entries.length; i++) {
      const e = entries[i];
      const counted = unreported[unreported.length - fresh + (i - run.usageRecorded)];
      session.recordUsage({ inputTokens: e.inputTokens, outputTokens: e.outputTokens, inputTokensDetails: e.inputTokensDetails }, counted === undefined ? undefined : { countedTokens: counted });
    }
    if (fresh > 0) unreported = [];
    run.usageRecorded = Math.max(run.usageRecorded, entries.length);
  }

  const sync = async () => {
    if (store !== undefined) await session.sync(store);
  };

  const agentsSessionObject = {
    acceptsRunContext: true,
    async getSessionId() {
      return session.sessionId;
    },
    async getItems(limit, runContext) {
      // A run starts by reading the history: its own items come after it
      // (a resumed run reads it again mid-run: it goes on).
      run = runOf(runContext);
      const items = historyItems(session.eventLog.events);
      return limit === undefined ? items : items.slice(Math.max(0, items.length - limit));
    },
    async addItems(items, runContext) {
      if (runContext !== undefined) run = runOf(runContext);
      for (const item of items ?? []) {
        if (!rendered(item)) recordItem(item, run.fromAdd);
      }
      recordUsage(runContext);
      await sync();
    },
    async popItem() {
      throw codedError("INVALID_ARGUMENT", "agentsSession: sessions are append-only (popItem is not supported)");
    },
    async clearSession() {
      throw codedError("INVALID_ARGUMENT", "agentsSession: sessions are append-only (clearSession is not supported); start a new Session");
    },
  };

  /** Compiles the model input: the run's new items recorded first. */
  async function callModelInputFilter({ modelData, agent, context }) {
    const fresh = (modelData.input ?? []).filter((item) => !rendered(item));
    if (run.cursor === 0 || run.cursor > fresh.length) {
      // A run's first model call here: a run resumed after a pause (its
      // input from its state, unmarked) has its messages before the pause
      // recorded: those followed by a recorded call or result.
      const recorded = fresh.map((item) => isRecorded(item));
      fresh.forEach((item, i) => {
        if (isMessage(item) && recorded.slice(i + 1).some(Boolean)) return;
        recordItem(item, run.fromFilter);
      });
    } else for (const item of fresh.slice(run.cursor)) recordItem(item, run.fromFilter);
    run.cursor = fresh.length;
    const tools = await sentTools(agent, context);
    const ctx = await compiler.compile(session, budget, { ...compileOptions, systemPrompt: compileOptions.systemPrompt ?? modelData.instructions ?? "", tools, format: "openai-responses" });
    try {
      unreported.push(ctx.tokenCount);
      // The compiled context (its ledger, cache report, ...), valid during the call.
      if (onCompile !== undefined) await onCompile(ctx);
      const { instructions, input } = ctx.toMessages({ format: "openai-responses" });
      return { instructions, input: toAgentInputItems(input).map((item) => mark(item, { rendered: true })) };
    } finally {
      ctx.free();
    }
  }

  /** The look-back tools for the agent, over this session. */
  const tools = lookBackTools
    ? LOOK_BACK_TOOLS.map((d) =>
        tool({
          name: d.name,
          description: d.description,
          parameters: d.parameters,
          strict: false,
          execute: async (args) => JSON.stringify(await session.lookBack(d.name, args, { artifactStore })),
        }),
      )
    : [];

  /**
   * Records in the session what a run that stopped for approvals holds
   * (`result.interruptions`): each interrupted call (once) with its
   * `approval_requested`, and the decisions `state.approve` /
   * `state.reject` made on them since (a rejection with its message);
   * with `store`, synced. Returns the events recorded.
   */
  async function recordApprovals(resultOrState) {
    const state = resultOrState?.state ?? resultOrState;
    if (state === null || typeof state?.getInterruptions !== "function") throw codedError("INVALID_ARGUMENT", "agentsSession: recordApprovals takes a RunResult or a RunState");
    const recorded = [];
    const known = approvalsIn(session.eventLog.events);
    const pending = pendingCalls(session);
    for (const item of state.getInterruptions()) {
      const raw = item?.rawItem;
      if (raw?.type !== "function_call" || typeof raw.callId !== "string") continue;
      recordItem(raw, run.fromAdd);
      if (!known.get(raw.callId)?.requested && latest.get(raw.callId)?.result === undefined) {
        recorded.push(session.requestApproval(raw.callId));
        pending.set(raw.callId, { callId: raw.callId });
      }
      const { event } = recordDecision(raw.callId, raw.name, state._context, pending);
      if (event) recorded.push(event);
    }
    await sync();
    return recorded;
  }

  return { session: agentsSessionObject, callModelInputFilter, tools, recordApprovals };
}
