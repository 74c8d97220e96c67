// agent-context-compiler/ai-sdk: what the Vercel AI SDK (`ai`, an optional
// peer dependency) needs from this package. It imports nothing of the
// package's main entry, so it never loads a second WebAssembly instance: it
// works on the objects it is given.
import { jsonSchema, tool } from "ai";
import { codedError } from "./coded.js";
import { unknownOption } from "./module-guard.js";
import { LOOK_BACK_TOOLS, METADATA_KEY, approvalsIn, approvedWith, compiledMetadata, decideIfPending, integrationOptions, pendingCalls, threadSession } from "./integration.js";

export { compileMetadata } from "./integration.js";

/**
 * The tools a run offers (`ToolSpec`s: `{ name, description, parameters }`,
 * as `runCompiled` hands them to its model in the `ai-sdk` format) as an AI
 * SDK `ToolSet`: each schema wrapped with `jsonSchema()`, and no `execute`,
 * so that the SDK returns the calls and the run records and runs them.
 */
export function aiSdkTools(specs) {
  if (!Array.isArray(specs)) throw codedError("INVALID_ARGUMENT", "aiSdkTools takes an array of tool specs ({ name, description, parameters })");
  const set = {};
  specs.forEach((spec, i) => {
    const where = `aiSdkTools: specs[${i}]`;
    if (spec === null || typeof spec !== "object") throw codedError("INVALID_ARGUMENT", `${where} is not an object`);
    const { name, description, parameters } = spec;
    if (typeof name !== "string" || name === "") throw codedError("INVALID_ARGUMENT", `${where}.name must be a non-empty string`);
    if (Object.hasOwn(set, name)) throw codedError("INVALID_ARGUMENT", `${where}: a second tool named ${name}`);
    if (description !== undefined && typeof description !== "string") throw codedError("INVALID_ARGUMENT", `${where}.description must be a string`);
    if (parameters === null || typeof parameters !== "object" || Array.isArray(parameters)) {
      throw codedError("INVALID_ARGUMENT", `${where}.parameters must be a JSON Schema object`);
    }
    set[name] = tool({ description, inputSchema: jsonSchema(parameters) });
  });
  return set;
}


/** The text of a tool result's output, and whether it is an error. */
function outputText(output) {
  switch (output?.type) {
    case "text":
    case "error-text":
      return [String(output.value), output.type === "error-text"];
    case "json":
    case "error-json":
      return [JSON.stringify(output.value ?? null), output.type === "error-json"];
    case "execution-denied":
      return [`execution denied${output.reason ? `: ${output.reason}` : ""}`, true];
    case "content":
      return [(output.value ?? []).map((p) => (p.type === "text" ? p.text : `[${p.mediaType ?? p.type}]`)).join("\n"), false];
    default:
      return [JSON.stringify(output ?? null), false];
  }
}

/** A tool call's input as recorded: the object, or the JSON text parsed. */
function callInput(input) {
  if (typeof input !== "string") return input ?? {};
  try {
    return input.trim() === "" ? {} : JSON.parse(input);
  } catch {
    return { input };
  }
}

/**
 * What the middleware knows it recorded in a session (read from the log
 * once per session object): the call ids with a `tool_call`, those whose
 * latest call has its outcome (a provider that uses an id again starts a
 * new call with it), and the last prompt suffix recorded (a retried call
 * sends it again).
 */
const recordedBySession = new WeakMap();
function recordedOf(session) {
  let r = recordedBySession.get(session);
  if (r === undefined) {
    r = { calls: new Set(), outcomes: new Set(), suffix: null };
    const log = session.eventLog;
    for (const e of log.events) {
      const id = e.data?.call_id;
      if (typeof id !== "string") continue;
      if (e.kind === "tool_call") {
        r.calls.add(id);
        r.outcomes.delete(id);
      } else if (e.kind === "tool_success" || e.kind === "tool_error" || e.kind === "tool_timeout") r.outcomes.add(id);
    }
    log.free();
    recordedBySession.set(session, r);
  }
  return r;
}

/** The input of every tool call `messages` (a prompt, or the SDK's messages) hold, by call id (an edited call's as edited). */
function callInputs(messages) {
  const inputs = new Map();
  for (const m of messages) {
    if (m.role !== "assistant" || !Array.isArray(m.content)) continue;
    for (const p of m.content) if (p.type === "tool-call") inputs.set(p.toolCallId, callInput(p.input));
  }
  return inputs;
}

/**
 * The decision a tool result of a call waiting for a person shows: a
 * rejection (the SDK's `execution-denied` output, with its reason), else an
 * approval, an edit when the call ran with other arguments than requested.
 */
function decisionOf(output, input, requested) {
  if (output?.type === "execution-denied") return { approve: false, ...(typeof output.reason === "string" && output.reason !== "" && { reason: output.reason }) };
  return approvedWith(input, requested);
}

/**
 * Records `messages` (part of a `LanguageModelV4Prompt`) in `session`: user
 * text as `user_input`, an assistant's text and calls as `assistant_output`
 * and `tool_call` (under the call's id), tool results as `tool_success` /
 * `tool_error` (redacted by `session.record`), each call and each outcome
 * once (a call refused when its reply was recorded keeps that outcome). The
 * result of a call waiting for a person records its decision first (an
 * edit when it ran with other arguments than requested: `inputs`, the
 * prompt's calls by id). System messages are the host's and are not
 * recorded.
 */
function recordPrompt(session, r, messages, inputs) {
  let pending;
  for (const m of messages) {
    const parts = Array.isArray(m.content) ? m.content : [];
    if (m.role === "user") {
      const text = parts.map((p) => (p.type === "text" ? p.text : `[attached ${p.mediaType ?? p.type}${p.filename ? ` ${p.filename}` : ""}]`)).join("\n");
      if (text !== "") session.record("user_input", { text });
    } else if (m.role === "assistant") {
      const text = parts.filter((p) => p.type === "text").map((p) => p.text).join("");
      if (text !== "") session.record("assistant_output", { text });
      for (const p of parts) {
        // A call id with its outcome recorded starts a new call.
        if (p.type !== "tool-call" || (r.calls.has(p.toolCallId) && !r.outcomes.has(p.toolCallId))) continue;
        r.calls.add(p.toolCallId);
        r.outcomes.delete(p.toolCallId);
        session.record("tool_call", { tool_name: p.toolName, arguments: callInput(p.input), call_id: p.toolCallId });
      }
    } else if (m.role === "tool") {
      for (const p of parts) {
        if (p.type !== "tool-result" || r.outcomes.has(p.toolCallId)) continue;
        pending ??= pendingCalls(session);
        const waiting = pending.get(p.toolCallId);
        if (waiting !== undefined) decideIfPending(session, p.toolCallId, decisionOf(p.output, inputs.get(p.toolCallId), waiting.arguments), pending);
        r.outcomes.add(p.toolCallId);
        const [text, failed] = outputText(p.output);
        session.record(failed ? "tool_error" : "tool_success", failed ? { tool: p.toolName, call_id: p.toolCallId, error: text } : { tool: p.toolName, call_id: p.toolCallId, result: text });
      }
    }
  }
}

/**
 * Records in `session` what the AI SDK's `messages` (the `ModelMessage`s a
 * host keeps: `result.response.messages` appended, and the tool message of
 * its `tool-approval-response` parts) hold of a pause for approvals, each
 * once: the results of the calls that ran before it, an
 * `approval_requested` per `tool-approval-request` part (its call recorded
 * by the middleware), and a decision per `tool-approval-response` part (an
 * edit when the host changed the call's `input` in `messages` before
 * approving; a denial with its reason). Call it when `generateText` stops
 * for approvals and when the person decides, then sync the session; the
 * middleware also records a decision from the result it finds in the next
 * prompt. Returns the approval events recorded.
 */
export function recordApprovals(session, messages) {
  if (session === null || typeof session?.decideApproval !== "function") throw codedError("INVALID_ARGUMENT", "recordApprovals: session must be a Session");
  if (!Array.isArray(messages)) throw codedError("INVALID_ARGUMENT", "recordApprovals takes the AI SDK's messages (ModelMessage[])");
  const r = recordedOf(session);
  const inputs = callInputs(messages);
  const lastAssistant = messages.findLastIndex((m) => m?.role === "assistant");
  recordPrompt(session, r, messages.slice(lastAssistant + 1).filter((m) => m?.role === "tool"), inputs);
  const log = session.eventLog;
  const known = approvalsIn(log.events);
  log.free();
  const pending = pendingCalls(session);
  const recorded = [];
  const callOf = new Map();
  const partsOf = (role) => messages.filter((m) => m?.role === role && Array.isArray(m.content)).flatMap((m) => m.content);
  for (const p of partsOf("assistant")) {
    if (p?.type !== "tool-approval-request") continue;
    callOf.set(p.approvalId, p.toolCallId);
    if (!r.calls.has(p.toolCallId) || r.outcomes.has(p.toolCallId) || known.get(p.toolCallId)?.requested) continue;
    recorded.push(session.requestApproval(p.toolCallId));
    pending.set(p.toolCallId, { callId: p.toolCallId, arguments: known.get(p.toolCallId)?.arguments });
  }
  for (const p of partsOf("tool")) {
    const id = p?.type === "tool-approval-response" ? callOf.get(p.approvalId) : undefined;
    if (id === undefined || !pending.has(id)) continue;
    const decision = p.approved ? approvedWith(inputs.get(id), pending.get(id).arguments) : decisionOf({ type: "execution-denied", reason: p.reason });
    recorded.push(decideIfPending(session, id, decision, pending));
  }
  return recorded;
}

/** A short key of a prompt's suffix: its length and two 32-bit FNV-1a hashes of its JSON (file bytes by their length and ends). */
function promptKey(length, suffix) {
  const text = JSON.stringify(suffix, (_, v) => (v instanceof Uint8Array ? `bytes:${v.length}:${v[0]}:${v.at(-1)}` : v));
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x811c9dc5);
  }
  return `${length}:${text.length}:${a >>> 0}:${b >>> 0}`;
}

/** A file part's data as the V4 prompt tags it. */
function fileData(data) {
  if (data instanceof URL) return { type: "url", url: data };
  if (typeof data === "string" && /^https?:\/\//.test(data)) return { type: "url", url: new URL(data) };
  return { type: "data", data };
}

/** One part of a compiled `ai-sdk` message as a V4 prompt part. */
function promptPart(part) {
  switch (part.type) {
    case "image":
      return { type: "file", data: fileData(part.image), mediaType: part.mediaType ?? "image" };
    case "file":
      return { type: "file", data: fileData(part.data), mediaType: part.mediaType, ...(part.filename && { filename: part.filename }) };
    default:
      return part;
  }
}

/**
 * A compiled context in the `ai-sdk` format (`{ instructions, messages }`)
 * as the `LanguageModelV4Prompt` a model gets: the instructions as system
 * messages first, every content as parts.
 */
export function toLanguageModelPrompt({ instructions, messages }) {
  const prompt = [];
  for (const s of instructions ?? []) {
    prompt.push(typeof s === "string" ? { role: "system", content: s } : { role: "system", content: s.content, ...(s.providerOptions && { providerOptions: s.providerOptions }) });
  }
  for (const m of messages) {
    const content = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content.map(promptPart);
    prompt.push({ role: m.role, content, ...(m.providerOptions && { providerOptions: m.providerOptions }) });
  }
  return prompt;
}

/** A V4 function tool as the `ToolSpec` a compile counts. */
const toolSpec = (t) => ({ name: t.name, description: t.description ?? "", parameters: t.inputSchema ?? { type: "object" } });

/**
 * Middleware for `wrapLanguageModel` (AI SDK 7): each model call of
 * `generateText` / `streamText` is compiled from `session` under `budget`
 * (`transformParams` records what is new in the prompt and hands the model
 * the compiled prompt with the step's tools), and the reply is recorded with
 * its calls and usage (`wrapGenerate` / `wrapStream`); with `store`, the
 * session is synced to it after every step. `session` is a `Session` or
 * `(sessionId) => Session | Promise<Session>`, the id coming from
 * `providerOptions.agentContextCompiler.sessionId`: called once per model
 * call; when it gives nothing, the session `store` saved under the id.
 * A call the SDK retries records nothing twice.
 */
export function contextMiddleware(options) {
  const { session, compiler, budget, store, compileOptions: given } = integrationOptions("contextMiddleware", options, { perThread: true });
  const { systemPrompt, ...compileOptions } = given;

  /** The call's session: the one given, or the thread's. */
  async function sessionOf(params) {
    if (typeof session !== "function") return session;
    const id = params.providerOptions?.[METADATA_KEY]?.sessionId;
    if (typeof id !== "string" || id === "") {
      throw codedError("INVALID_ARGUMENT", "contextMiddleware: with a session function, give providerOptions: { agentContextCompiler: { sessionId } }");
    }
    return threadSession("contextMiddleware", session, store, id);
  }

  /** Records a reply's content (V4 parts) and usage; syncs to the store. */
  async function recordReply(s, content, usage) {
    // Text and calls (reasoning, sources and files are not sent back in this format).
    const parts = content.filter((p) => (p.type === "text" && p.text !== "") || p.type === "tool-call");
    const reply = { content: parts, ...(usage?.inputTokens?.total !== undefined && { usage }) };
    if (parts.length > 0) {
      const r = recordedOf(s);
      // A reply came: the next prompt is no retry, even with the same text.
      r.suffix = null;
      const { toolCalls } = s.recordReply(reply);
      // A call refused (its input was not JSON) has its outcome already.
      const running = new Set(toolCalls.map((c) => c.callOptions.callId));
      for (const p of parts) {
        if (p.type !== "tool-call" || running.has(p.toolCallId)) continue;
        r.calls.add(p.toolCallId);
        r.outcomes.add(p.toolCallId);
      }
      // The SDK runs the calls: record each under its id, the results come
      // back in the next step's prompt.
      for (const c of toolCalls) {
        const notes = { call_id: c.callOptions.callId, ...(c.callOptions.thoughtSignature && { thought_signature: c.callOptions.thoughtSignature }), ...(c.callOptions.reasoning && { reasoning: c.callOptions.reasoning }) };
        r.calls.add(notes.call_id);
        r.outcomes.delete(notes.call_id);
        s.record("tool_call", { tool_name: c.name, arguments: c.arguments, ...notes });
      }
    } else if (reply.usage) {
      recordedOf(s).suffix = null;
      s.recordUsage(reply.usage);
    }
    if (store !== undefined) await s.sync(store);
  }

  // Per model call, by the params the model got: its session (resolved
  // once) and what its compile held and repeated (its ledger and cache
  // report, for the reply's providerMetadata).
  const calls = new WeakMap();
  const withCompile = (metadata, params) => {
    const compile = calls.get(params)?.compile;
    return compile === undefined ? metadata : { ...metadata, [METADATA_KEY]: compile };
  };
  const sessionFor = async (params) => calls.get(params)?.session ?? (await sessionOf(params));

  return {
    specificationVersion: "v4",
    async transformParams({ params }) {
      const s = await sessionOf(params);
      const prompt = params.prompt ?? [];
      const r = recordedOf(s);
      const log = s.eventLog;
      const empty = log.length === 0;
      log.free();
      const lastAssistant = prompt.findLastIndex((m) => m.role === "assistant");
      const suffix = empty ? prompt : prompt.slice(lastAssistant + 1);
      // A retry sends the same prompt again (before any reply): what it
      // holds is recorded.
      const key = promptKey(prompt.length, suffix);
      if (key !== r.suffix) {
        recordPrompt(s, r, suffix, callInputs(prompt));
        r.suffix = key;
      }
      const system = systemPrompt ?? prompt.filter((m) => m.role === "system").map((m) => m.content).join("\n\n");
      const tools = (params.tools ?? []).filter((t) => t.type === "function").map(toolSpec);
      const ctx = await compiler.compile(s, budget, { ...compileOptions, systemPrompt: system, tools, format: "ai-sdk" });
      try {
        const transformed = { ...params, prompt: toLanguageModelPrompt(ctx.toMessages({ format: "ai-sdk" })) };
        calls.set(transformed, { session: s, compile: compiledMetadata(ctx) });
        return transformed;
      } finally {
        ctx.free();
      }
    },
    async wrapGenerate({ doGenerate, params }) {
      const s = await sessionFor(params);
      const result = await doGenerate();
      await recordReply(s, result.content ?? [], result.usage);
      return { ...result, providerMetadata: withCompile(result.providerMetadata, params) };
    },
    async wrapStream({ doStream, params }) {
      const s = await sessionFor(params);
      const { stream, ...rest } = await doStream();
      const content = [];
      let text = "";
      let usage;
      const flushText = () => {
        if (text !== "") content.push({ type: "text", text });
        text = "";
      };
      const recorder = new TransformStream({
        transform(chunk, controller) {
          if (chunk.type === "text-delta") text += chunk.delta ?? "";
          else if (chunk.type === "tool-call") {
            flushText();
            content.push(chunk);
          } else if (chunk.type === "finish") {
            usage = chunk.usage;
            chunk = { ...chunk, providerMetadata: withCompile(chunk.providerMetadata, params) };
          }
          controller.enqueue(chunk);
        },
        async flush() {
          flushText();
          await recordReply(s, content, usage);
        },
      });
      return { stream: stream.pipeThrough(recorder), ...rest };
    },
  };
}

/**
 * The look-back tools (`search_history`, `read_artifact`) over `session` as
 * an AI SDK `ToolSet` with `execute`, to spread into `generateText`'s
 * `tools` beside the app's (a middleware cannot add tools the SDK runs):
 * `read_artifact` reads the outputs `artifactStore` (the
 * `ArtifactAttacher`'s) holds for this session. What a call gets wrong
 * (a handle the session does not name, bad arguments) reaches the model as
 * its tool error.
 */
export function lookBackTools(options) {
  if (options === null || typeof options !== "object") throw codedError("INVALID_ARGUMENT", "lookBackTools takes { session, artifactStore }");
  const typo = unknownOption("lookBackTools", options, ["session", "artifactStore"]);
  if (typo) throw typo;
  const { session, artifactStore } = options;
  if (session === null || typeof session?.lookBack !== "function") throw codedError("INVALID_ARGUMENT", "lookBackTools: session must be a Session");
  if (artifactStore !== undefined && (artifactStore === null || typeof artifactStore.retrieve !== "function")) {
    throw codedError("INVALID_ARGUMENT", "lookBackTools: artifactStore must be an artifact store (the ArtifactAttacher's)");
  }
  const set = {};
  for (const d of LOOK_BACK_TOOLS) {
    set[d.name] = tool({
      description: d.description,
      inputSchema: jsonSchema(d.parameters),
      execute: (input) => session.lookBack(d.name, input, { artifactStore }),
    });
  }
  return set;
}
