// agent-context-compiler/langchain: middleware for LangChain's `createAgent`
// (`langchain` 1.x, an optional peer dependency). It imports nothing of the
// package's main entry, so it never loads a second WebAssembly instance: it
// works on the objects it is given.
import { createMiddleware, tool } from "langchain";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { codedError } from "./coded.js";
import { LOOK_BACK_TOOLS, METADATA_KEY, approvalsIn, approvedWith, compiledMetadata, decideIfPending, integrationOptions, lookBackOptions, pendingCalls, sameJson, threadSession } from "./integration.js";

export { compileMetadata } from "./integration.js";

/** A message's text: a string, or its text blocks (reasoning and tool-use blocks are not text). */
function textOf(content) {
  if (typeof content === "string") return content;
  return (content ?? []).map((b) => (typeof b === "string" ? b : b?.type === "text" ? b.text : "")).join("");
}

/** A message's text for a model that reads it: its text, or a line per block that is not text (an image, a file). */
function shownText(content) {
  if (typeof content === "string") return content;
  return (content ?? []).map((b) => (typeof b === "string" ? b : b?.type === "text" ? b.text : `[${b?.type}]`)).join("");
}

/** The Anthropic reasoning blocks of an AI message (signed thinking, redacted thinking), as the provider gave them. */
function reasoningOf(content) {
  if (!Array.isArray(content)) return undefined;
  const items = content.filter((b) => b?.type === "thinking" || b?.type === "redacted_thinking");
  return items.length === 0 ? undefined : { format: "anthropic", items };
}

/** A LangChain tool as the `ToolSpec` a compile counts. */
function toolSpec(tool) {
  let parameters = { type: "object" };
  try {
    if (tool.schema) parameters = toJsonSchema(tool.schema);
  } catch {
    // A schema the converter does not take is counted as an open object.
  }
  return { name: tool.name, description: tool.description ?? "", parameters };
}

/** A compiled context in the `openai` format as `{ systemMessage, messages }` of LangChain messages. */
export function toLangChainMessages(compiled) {
  const system = [];
  const messages = [];
  for (const m of compiled) {
    if (m.role === "system" || m.role === "developer") {
      if (messages.length === 0) system.push(shownText(m.content));
      else messages.push(new HumanMessage(shownText(m.content)));
    } else if (m.role === "user") {
      messages.push(new HumanMessage({ content: m.content }));
    } else if (m.role === "assistant") {
      const toolCalls = (m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments || "{}"), type: "tool_call" }));
      messages.push(new AIMessage({ content: m.content ?? "", tool_calls: toolCalls }));
    } else if (m.role === "tool") {
      messages.push(new ToolMessage({ content: shownText(m.content), tool_call_id: m.tool_call_id }));
    }
  }
  return { systemMessage: new SystemMessage(system.join("\n\n")), messages };
}

/**
 * A compiled context in the `anthropic` format (`{ system, messages }`) as
 * `{ systemMessage, messages }` of LangChain messages whose content is the
 * format's own blocks, which `ChatAnthropic` sends as they are: the system
 * blocks with their cache marks, an assistant turn's signed thinking first
 * (its `tool_use` blocks also as its `tool_calls`), a user turn's
 * `tool_result` blocks and text in one message, as the API wants them.
 */
export function toAnthropicLangChainMessages({ system, messages: compiled }) {
  const messages = compiled.map((m) => {
    if (m.role !== "assistant") return new HumanMessage({ content: m.content });
    const blocks = typeof m.content === "string" ? [] : m.content;
    const toolCalls = blocks.filter((b) => b.type === "tool_use").map((b) => ({ id: b.id, name: b.name, args: b.input ?? {}, type: "tool_call" }));
    return new AIMessage({ content: m.content, tool_calls: toolCalls });
  });
  const systemMessage = new SystemMessage(typeof system === "string" ? system : { content: system ?? "" });
  return { systemMessage, messages };
}

/** Whether `model` is a ChatAnthropic (compiled in the `anthropic` format, its thinking sent back). */
const isAnthropic = (model) => {
  try {
    return model?._llmType?.() === "anthropic";
  } catch {
    return false;
  }
};

/** Whether `value` is a LangGraph `Command` (a tool's way to update the state). */
const isCommand = (value) => value !== null && typeof value === "object" && value.lg_name === "Command";

/**
 * Middleware for `createAgent` (langchain 1.x): every model call is
 * compiled from the thread's session under `budget` (`wrapModelCall` hands
 * the model the compiled `messages` and `systemMessage`; the checkpointed
 * thread is left as it is), the state's messages not yet recorded are
 * recorded first (by `BaseMessage.id`), the model's reply is recorded with
 * its text, reasoning, calls and usage, and `wrapToolCall` records each
 * tool's result and returns it redacted (a `Command`'s tool messages too),
 * so the checkpointer holds no secret either. A `ChatAnthropic` model gets
 * the `anthropic` format (its signed thinking goes back with its tool
 * calls); other models the `openai` one. `session` is a `Session` or
 * `(threadId) => Session | Promise<Session>`, the id being
 * `runtime.configurable.thread_id` (when it gives nothing, the session
 * `store` saved under the id); with `store`, the session is synced to it
 * after every step. The look-back tools (`search_history`,
 * `read_artifact` over `artifactStore`) are declared for the agent unless
 * `lookBackTools: false`. A tool that throws gives the model an error result
 * (recorded as `tool_error`), as LangChain does without a middleware.
 */
export function contextMiddleware(options) {
  const { session, compiler, budget, store, compileOptions: given } = integrationOptions("contextMiddleware", options, { perThread: true, own: ["artifactStore", "lookBackTools"] });
  const { artifactStore, lookBackTools } = lookBackOptions("contextMiddleware", options);
  const { systemPrompt, ...compileOptions } = given;

  /** Per session: the message ids and call ids recorded. */
  const seen = new WeakMap();
  function recordedOf(s) {
    let r = seen.get(s);
    if (!r) {
      r = { messages: new Set(), calls: new Set(), results: new Set() };
      for (const e of s.eventLog.events) {
        if (e.data?.message_id) r.messages.add(e.data.message_id);
        if (e.kind === "tool_call" && e.data?.call_id) r.calls.add(e.data.call_id);
        if (["tool_success", "tool_error", "tool_timeout"].includes(e.kind) && e.data?.call_id) r.results.add(e.data.call_id);
      }
      seen.set(s, r);
    }
    return r;
  }

  async function sessionOf(config) {
    if (typeof session !== "function") return session;
    const id = config?.configurable?.thread_id;
    if (typeof id !== "string" || id === "") {
      throw codedError("INVALID_ARGUMENT", "contextMiddleware: with a session function, invoke the agent with { configurable: { thread_id } }");
    }
    return threadSession("contextMiddleware", session, store, id);
  }

  /**
   * Records a tool result once; returns the event's (redacted) text. The
   * result of a call still waiting for a person never ran: it is the
   * rejection `humanInTheLoopMiddleware` answers it with, recorded first.
   */
  function recordResult(s, r, message) {
    const failed = message.status === "error";
    const pending = r.calls.has(message.tool_call_id) ? pendingCalls(s) : new Map();
    if (pending.has(message.tool_call_id)) decideIfPending(s, message.tool_call_id, { approve: false, reason: shownText(message.content) }, pending);
    const text = shownText(message.content);
    const data = failed ? { tool: message.name ?? "unknown", call_id: message.tool_call_id, error: text } : { tool: message.name ?? "unknown", call_id: message.tool_call_id, result: text };
    if (message.id) data.message_id = message.id;
    const event = s.record(failed ? "tool_error" : "tool_success", data);
    r.results.add(message.tool_call_id);
    if (message.id) r.messages.add(message.id);
    return failed ? event.data.error : event.data.result;
  }

  /** Records an AI message: its usage, text (with its reasoning) and calls (the first with the reasoning of a reply of calls only), once. */
  function recordAi(s, r, message) {
    if (message.usage_metadata) s.recordUsage(message.usage_metadata);
    const text = textOf(message.content);
    let reasoning = reasoningOf(message.content);
    const calls = message.tool_calls ?? [];
    // The message's id goes on its first event, so that a process that
    // loads the session knows it is recorded.
    let messageId = message.id;
    if (text !== "" || calls.length === 0) {
      s.record("assistant_output", { text, ...(messageId && { message_id: messageId }), ...(reasoning && { reasoning }) });
      reasoning = undefined;
      messageId = undefined;
    }
    for (const c of calls) {
      if (!c.id) continue;
      // A new message's call is a new call, whatever id a provider gave it
      // before: its result is pending.
      r.calls.add(c.id);
      r.results.delete(c.id);
      s.record("tool_call", { tool_name: c.name, arguments: c.args ?? {}, call_id: c.id, ...(messageId && { message_id: messageId }), ...(reasoning && { reasoning }) });
      reasoning = undefined;
      messageId = undefined;
    }
    if (message.id) r.messages.add(message.id);
  }

  /** Records the state's messages not recorded yet. */
  function recordState(s, messages) {
    const r = recordedOf(s);
    for (const m of messages) {
      if (m.id && r.messages.has(m.id)) continue;
      const type = m.getType?.() ?? m._getType?.();
      if (type === "human") {
        s.record("user_input", { text: shownText(m.content), ...(m.id && { message_id: m.id }) });
        if (m.id) r.messages.add(m.id);
      } else if (type === "ai") {
        // A reply this middleware recorded carries the id it was given; one
        // without an id, of calls only, is known by its calls.
        const calls = m.tool_calls ?? [];
        if (!m.id && textOf(m.content) === "" && calls.length > 0 && calls.every((c) => r.calls.has(c.id))) continue;
        recordAi(s, r, m);
      } else if (type === "tool" && (m.id || !r.results.has(m.tool_call_id))) {
        recordResult(s, r, m);
      }
    }
    recordDropped(s, messages);
  }

  /**
   * Records as not run the waiting calls no AI message of the thread holds
   * any more: `humanInTheLoopMiddleware` drops a reply's approved and edited
   * calls when another of its calls is rejected (and asks the model again).
   */
  function recordDropped(s, messages) {
    const pending = pendingCalls(s);
    if (pending.size === 0) return;
    const held = new Set(messages.flatMap((m) => ((m.getType?.() ?? m._getType?.()) === "ai" ? (m.tool_calls ?? []).map((c) => c.id) : [])));
    for (const id of [...pending.keys()]) {
      if (!held.has(id)) decideIfPending(s, id, { approve: false, reason: "not run: humanInTheLoopMiddleware dropped it, another call of its reply being rejected" }, pending);
    }
  }

  /** `message` (a tool's result) recorded, as the redacted message to keep in its place (never the message as it came). */
  function redacted(s, r, message) {
    // The state keeps it under the id it was recorded by.
    const id = message.id ?? `acc-${crypto.randomUUID()}`;
    const { tool_call_id, name, status, content } = message;
    const text = recordResult(s, r, { tool_call_id, name, status, content, id });
    return new ToolMessage({ content: text, tool_call_id, name, status, id, artifact: undefined });
  }

  /** A tool message given as a plain object (`{ role: "tool", ... }`, as LangGraph's reducer takes it) as a `ToolMessage`. */
  const asToolMessage = (m) =>
    ToolMessage.isInstance(m)
      ? m
      : m !== null && typeof m === "object" && (m.role === "tool" || m.type === "tool") && typeof m.tool_call_id === "string"
        ? new ToolMessage({ content: m.content ?? "", tool_call_id: m.tool_call_id, name: m.name, status: m.status, id: m.id })
        : null;

  /** A `Command`'s update with each of its tool messages recorded and redacted in place. */
  function redactCommand(s, r, command) {
    const one = (m) => {
      const tool = asToolMessage(m);
      return tool === null ? m : redacted(s, r, tool);
    };
    const messagesOf = (value) => (Array.isArray(value) ? value.map(one) : one(value));
    const update = command.update;
    if (Array.isArray(update)) {
      command.update = update.map((entry) => (Array.isArray(entry) && entry[0] === "messages" ? [entry[0], messagesOf(entry[1])] : entry));
    } else if (update !== null && typeof update === "object" && "messages" in update) {
      command.update = { ...update, messages: messagesOf(update.messages) };
    }
    return command;
  }

  const sync = async (s) => {
    if (store !== undefined) await s.sync(store);
  };

  /** The look-back tools, each over its call's session. */
  const tools = lookBackTools
    ? LOOK_BACK_TOOLS.map((d) =>
        tool(
          async (args, config) => {
            try {
              return JSON.stringify(await (await sessionOf(config)).lookBack(d.name, args, { artifactStore }));
            } catch (e) {
              // What the model asked wrongly (a handle the session does not
              // name, bad arguments) is its tool error, not the run's end.
              if (e?.code !== "INVALID_ARGUMENT") throw e;
              return new ToolMessage({ content: e.message, tool_call_id: config.toolCall?.id ?? "", name: d.name, status: "error" });
            }
          },
          { name: d.name, description: d.description, schema: d.parameters },
        ),
      )
    : [];

  return createMiddleware({
    name: "AgentContextCompiler",
    tools,
    async wrapModelCall(request, handler) {
      const s = await sessionOf(request.runtime);
      recordState(s, request.messages);
      const system = systemPrompt ?? shownText(request.systemMessage?.content ?? request.systemPrompt ?? "");
      const format = isAnthropic(request.model) ? "anthropic" : "openai";
      const ctx = await compiler.compile(s, budget, { ...compileOptions, systemPrompt: system, tools: (request.tools ?? []).filter((t) => t?.name).map(toolSpec), format });
      let compiled;
      let compile;
      try {
        const rendered = ctx.toMessages({ format });
        compiled = format === "anthropic" ? toAnthropicLangChainMessages(rendered) : toLangChainMessages(rendered);
        compile = compiledMetadata(ctx);
      } finally {
        ctx.free();
      }
      const response = await handler({ ...request, ...compiled });
      if (AIMessage.isInstance(response)) {
        // What the compile held and repeated, on the reply (not in
        // `lc_kwargs`: the checkpointer does not keep it).
        response.response_metadata = { ...response.response_metadata, [METADATA_KEY]: compile };
        // The state keeps the reply under the id it was recorded by.
        // (the checkpointer serialises `lc_kwargs`, so the id goes there too).
        if (!response.id) {
          response.id = `acc-${crypto.randomUUID()}`;
          if (response.lc_kwargs) response.lc_kwargs.id = response.id;
        }
        recordAi(s, recordedOf(s), response);
        await sync(s);
      }
      return response;
    },
    async wrapToolCall(request, handler) {
      // A call that waited for a person runs: approved, or edited (other arguments).
      const call = request.toolCall;
      if (typeof call?.id === "string") {
        const s = await sessionOf(request.runtime);
        const pending = pendingCalls(s);
        const waiting = pending.get(call.id);
        if (waiting !== undefined) decideIfPending(s, call.id, approvedWith(call.args ?? {}, waiting.arguments), pending);
      }
      let result;
      try {
        result = await handler(request);
      } catch (e) {
        // LangChain makes an error that passes a middleware's wrapToolCall
        // end the run: a tool's failure is the model's to read, as it is
        // without this middleware (recorded as the call's tool_error).
        // Interrupts, parent commands and cancels still go up.
        if (e?.is_bubble_up === true || request.runtime?.signal?.aborted) throw e;
        const call = request.toolCall ?? {};
        const content = e?.name === "ToolInvocationError" ? e.message : `${e}\n Please fix your mistakes.`;
        result = new ToolMessage({ content, tool_call_id: call.id ?? "", name: call.name, status: "error" });
      }
      const isMessage = ToolMessage.isInstance(result);
      if (!isMessage && !isCommand(result)) return result;
      const s = await sessionOf(request.runtime);
      const r = recordedOf(s);
      const kept = isMessage ? redacted(s, r, result) : redactCommand(s, r, result);
      await sync(s);
      return kept;
    },
  });
}

/**
 * Records in `session` the calls a run stopped on for
 * `humanInTheLoopMiddleware` (`result.__interrupt__` of `agent.invoke`, or
 * that list itself), each once: an `approval_requested` per action request,
 * for the recorded call with no outcome it names (its tool and arguments).
 * The decisions given with `Command({ resume: { decisions } })` are recorded
 * by `contextMiddleware` as they take effect (an approval or an edit when
 * the call runs, a rejection when its message comes). Sync the session
 * afterwards. Returns the events recorded (none for a run that did not stop).
 */
export function recordApprovals(session, result) {
  if (session === null || typeof session?.requestApproval !== "function") throw codedError("INVALID_ARGUMENT", "recordApprovals: session must be a Session");
  if (result === null || typeof result !== "object") throw codedError("INVALID_ARGUMENT", "recordApprovals takes what agent.invoke returned (its __interrupt__) or that list");
  // A run that did not stop has no __interrupt__: nothing waits.
  const interrupts = Array.isArray(result) ? result : result.__interrupt__ ?? [];
  if (!Array.isArray(interrupts)) throw codedError("INVALID_ARGUMENT", "recordApprovals: __interrupt__ must be a list");
  const events = session.eventLog.events;
  const known = approvalsIn(events);
  const answered = new Set(events.filter((e) => ["tool_success", "tool_error", "tool_timeout"].includes(e.kind)).map((e) => e.data?.call_id));
  // The calls that may wait: recorded, unanswered, not requested (latest first).
  const open = events.filter((e) => e.kind === "tool_call" && typeof e.data?.call_id === "string" && !answered.has(e.data.call_id) && !known.get(e.data.call_id)?.requested).reverse();
  const recorded = [];
  for (const action of interrupts.flatMap((i) => i?.value?.actionRequests ?? [])) {
    // By its tool and arguments (recorded redacted: else by its tool alone).
    let at = open.findIndex((e) => e.data.tool_name === action?.name && sameJson(e.data.arguments, action?.args ?? {}));
    if (at < 0) at = open.findIndex((e) => e.data.tool_name === action?.name);
    if (at < 0) continue;
    const [call] = open.splice(at, 1);
    recorded.push(session.requestApproval(call.data.call_id));
  }
  return recorded;
}
