// agent-context-compiler/openai-agents: what the OpenAI Agents SDK
// (`@openai/agents`, an optional peer dependency) needs from this package:
// its `Session` interface over this package's session (and store), and the
// `callModelInputFilter` that compiles each model input. It imports nothing
// of the package's main entry, so it never loads a second WebAssembly
// instance: it works on the objects it is given.
import { codedError } from "./coded.js";
import { integrationOptions } from "./integration.js";


/** The `providerData` key marking an item this integration rendered. */
const MARK = "agentContextCompiler";

/** Whether `item` was rendered here (history or a compiled input). */
const rendered = (item) => item?.providerData?.[MARK] !== undefined;

/** Marks `item` as rendered here. */
const mark = (item, how) => ({ ...item, providerData: { ...(item.providerData ?? {}), [MARK]: how } });

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

/**
 * The OpenAI Agents SDK's `Session` over this package's `session` (with
 * `store`, synced after every write), and the `callModelInputFilter` that
 * compiles every model input from it under `budget`: `run(agent, input, {
 * session, callModelInputFilter })`. What a run adds is recorded once (calls
 * and results by their `callId`, the run's new items by a cursor; items the
 * filter or `getItems` rendered are marked in `providerData` and skipped
 * when the SDK persists them back); the usage of each model call is read
 * from the run context in `addItems`. Sessions are append-only: `popItem`
 * and `clearSession` reject with `INVALID_ARGUMENT`.
 */
export function agentsSession(options) {
  const { session, compiler, budget, store, compileOptions } = integrationOptions("agentsSession", options, { perThread: false, own: ["onCompile"] });
  const { onCompile } = options;
  if (onCompile !== undefined && typeof onCompile !== "function") throw codedError("INVALID_ARGUMENT", "agentsSession: onCompile must be a function of the compiled context");

  /** Call ids whose call, and whose result, are recorded. */
  const calls = new Set();
  const results = new Set();
  /** Ids of the assistant messages recorded. */
  const messages = new Set();
  /** This run's state: its unmarked items recorded, the user texts the filter recorded, the compiles' counts and the usage entries recorded. */
  let run = { cursor: 0, userTexts: [], counts: [], usageRecorded: 0 };
  for (const e of session.eventLog.events) {
    const id = e.data?.call_id;
    if (e.kind === "tool_call" && id) calls.add(id);
    if (["tool_success", "tool_error", "tool_timeout"].includes(e.kind) && id) results.add(id);
  }

  /** Records one item the SDK produced (not one rendered here); true when it was new. */
  function recordItem(item, fromFilter) {
    if (item.type === "function_call") {
      if (calls.has(item.callId)) return false;
      calls.add(item.callId);
      session.record("tool_call", { tool_name: item.name, arguments: callArguments(item.arguments), call_id: item.callId });
      return true;
    }
    if (item.type === "function_call_result") {
      if (results.has(item.callId)) return false;
      results.add(item.callId);
      const failed = item.status === "incomplete";
      const text = resultText(item.output);
      session.record(failed ? "tool_error" : "tool_success", failed ? { tool: item.name, call_id: item.callId, error: text } : { tool: item.name, call_id: item.callId, result: text });
      return true;
    }
    if (item.type === "message" || (item.role && item.type === undefined)) {
      const text = messageText(item.content);
      if (item.role === "assistant") {
        if (item.id && messages.has(item.id)) return false;
        if (item.id) messages.add(item.id);
        if (text !== "") session.record("assistant_output", { text });
        return true;
      }
      if (item.role === "user") {
        const seen = run.userTexts.indexOf(text);
        if (!fromFilter && seen >= 0) {
          run.userTexts.splice(seen, 1);
          return false;
        }
        if (fromFilter) run.userTexts.push(text);
        if (text !== "") session.record("user_input", { text });
        return true;
      }
    }
    return false;
  }

  /** Records the usage of the run's model calls not recorded yet. */
  function recordUsage(runContext) {
    const entries = runContext?.usage?.requestUsageEntries ?? [];
    for (let i = run.usageRecorded; i < entries.length; i++) {
      const e = entries[i];
      const counted = run.counts[i];
      session.recordUsage({ inputTokens: e.inputTokens, outputTokens: e.outputTokens, inputTokensDetails: e.inputTokensDetails }, counted === undefined ? undefined : { countedTokens: counted });
    }
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
    async getItems(limit) {
      // A run starts by reading the history: its own items start after it.
      run = { cursor: 0, userTexts: [], counts: [], usageRecorded: 0 };
      const items = historyItems(session.eventLog.events);
      return limit === undefined ? items : items.slice(Math.max(0, items.length - limit));
    },
    async addItems(items, runContext) {
      for (const item of items ?? []) {
        if (!rendered(item)) recordItem(item, false);
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
  async function callModelInputFilter({ modelData }) {
    const fresh = (modelData.input ?? []).filter((item) => !rendered(item));
    for (const item of fresh.slice(run.cursor)) recordItem(item, true);
    run.cursor = fresh.length;
    const ctx = await compiler.compile(session, budget, { ...compileOptions, systemPrompt: compileOptions.systemPrompt ?? modelData.instructions ?? "", format: "openai-responses" });
    try {
      run.counts.push(ctx.tokenCount);
      // The compiled context (its ledger, cache report, ...), valid during the call.
      if (onCompile !== undefined) await onCompile(ctx);
      const { instructions, input } = ctx.toMessages({ format: "openai-responses" });
      return { instructions, input: toAgentInputItems(input).map((item) => mark(item, { rendered: true })) };
    } finally {
      ctx.free();
    }
  }

  return { session: agentsSessionObject, callModelInputFilter };
}
