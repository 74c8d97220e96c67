// agent-context-compiler/langchain: middleware for LangChain's `createAgent`
// (`langchain` 1.x, an optional peer dependency). It imports nothing of the
// package's main entry, so it never loads a second WebAssembly instance: it
// works on the objects it is given.
import { createMiddleware } from "langchain";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { codedError } from "./coded.js";
import { integrationOptions } from "./integration.js";


/** A message's text: a string, or its text blocks. */
function textOf(content) {
  if (typeof content === "string") return content;
  return (content ?? []).map((b) => (typeof b === "string" ? b : b.type === "text" ? b.text : `[${b.type}]`)).join("");
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
      if (messages.length === 0) system.push(textOf(m.content));
      else messages.push(new HumanMessage(textOf(m.content)));
    } else if (m.role === "user") {
      messages.push(new HumanMessage({ content: m.content }));
    } else if (m.role === "assistant") {
      const toolCalls = (m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments || "{}"), type: "tool_call" }));
      messages.push(new AIMessage({ content: m.content ?? "", tool_calls: toolCalls }));
    } else if (m.role === "tool") {
      messages.push(new ToolMessage({ content: textOf(m.content), tool_call_id: m.tool_call_id }));
    }
  }
  return { systemMessage: new SystemMessage(system.join("\n\n")), messages };
}

/**
 * Middleware for `createAgent` (langchain 1.x): every model call is
 * compiled from the thread's session under `budget` (`wrapModelCall` hands
 * the model the compiled `messages` and `systemMessage`; the checkpointed
 * thread is left as it is), the state's messages not yet recorded are
 * recorded first (by `BaseMessage.id`), the model's reply is recorded with
 * its calls and usage, and `wrapToolCall` records each tool's result and
 * returns it redacted, so the checkpointer holds no secret either. `session`
 * is a `Session` or `(threadId) => Session | Promise<Session>`, the id being
 * `runtime.configurable.thread_id`; with `store`, the session is synced to
 * it after every step.
 */
export function contextMiddleware(options) {
  const { session, compiler, budget, store, compileOptions: given } = integrationOptions("contextMiddleware", options, { perThread: true });
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

  async function sessionOf(runtime) {
    if (typeof session !== "function") return session;
    const id = runtime?.configurable?.thread_id;
    if (typeof id !== "string" || id === "") {
      throw codedError("INVALID_ARGUMENT", "contextMiddleware: with a session function, invoke the agent with { configurable: { thread_id } }");
    }
    return await session(id);
  }

  /** Records a tool result once; returns the event's (redacted) text. */
  function recordResult(s, r, message) {
    const failed = message.status === "error";
    const text = textOf(message.content);
    const data = failed ? { tool: message.name ?? "unknown", call_id: message.tool_call_id, error: text } : { tool: message.name ?? "unknown", call_id: message.tool_call_id, result: text };
    if (message.id) data.message_id = message.id;
    const event = s.record(failed ? "tool_error" : "tool_success", data);
    r.results.add(message.tool_call_id);
    if (message.id) r.messages.add(message.id);
    return failed ? event.data.error : event.data.result;
  }

  /** Records an AI message: its usage, text and calls, once. */
  function recordAi(s, r, message) {
    if (message.usage_metadata) s.recordUsage(message.usage_metadata);
    const text = textOf(message.content);
    if (text !== "" || !(message.tool_calls?.length > 0)) s.record("assistant_output", { text, ...(message.id && { message_id: message.id }) });
    for (const c of message.tool_calls ?? []) {
      if (!c.id || r.calls.has(c.id)) continue;
      r.calls.add(c.id);
      s.record("tool_call", { tool_name: c.name, arguments: c.args ?? {}, call_id: c.id });
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
        s.record("user_input", { text: textOf(m.content), ...(m.id && { message_id: m.id }) });
        if (m.id) r.messages.add(m.id);
      } else if (type === "ai") {
        // A reply this middleware recorded carries the id it was given; one
        // of calls only is known by its calls.
        const calls = m.tool_calls ?? [];
        if (textOf(m.content) === "" && calls.length > 0 && calls.every((c) => r.calls.has(c.id))) continue;
        recordAi(s, r, m);
      } else if (type === "tool" && !r.results.has(m.tool_call_id)) {
        recordResult(s, r, m);
      }
    }
  }

  const sync = async (s) => {
    if (store !== undefined) await s.sync(store);
  };

  return createMiddleware({
    name: "AgentContextCompiler",
    async wrapModelCall(request, handler) {
      const s = await sessionOf(request.runtime);
      recordState(s, request.messages);
      const system = systemPrompt ?? textOf(request.systemMessage?.content ?? request.systemPrompt ?? "");
      const ctx = await compiler.compile(s, budget, { ...compileOptions, systemPrompt: system, tools: (request.tools ?? []).filter((t) => t?.name).map(toolSpec), format: "openai" });
      let compiled;
      let compile;
      try {
        compiled = toLangChainMessages(ctx.toMessages({ format: "openai" }));
        compile = { ledger: ctx.ledger, cache: ctx.cache };
      } finally {
        ctx.free();
      }
      const response = await handler({ ...request, ...compiled });
      if (AIMessage.isInstance(response)) {
        // What the compile held and repeated, on the reply (not in
        // `lc_kwargs`: the checkpointer does not keep it).
        response.response_metadata = { ...response.response_metadata, agentContextCompiler: compile };
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
      const result = await handler(request);
      if (!ToolMessage.isInstance(result)) return result;
      const s = await sessionOf(request.runtime);
      const r = recordedOf(s);
      if (r.results.has(result.tool_call_id)) return result;
      const text = recordResult(s, r, result);
      await sync(s);
      return new ToolMessage({ content: text, tool_call_id: result.tool_call_id, name: result.name, status: result.status, id: result.id, artifact: undefined });
    },
  });
}
