// A scripted provider HTTP API behind a WHATWG fetch: it routes OpenAI Chat
// Completions, OpenAI Responses and Anthropic Messages requests, captures
// every request body, and answers each with the JSON (or SSE stream) the real
// API would send for a provider-neutral scripted reply.
import { counted, tokens } from "./count.mjs";

/** The API a request path is for (query strings and base-URL prefixes ignored). */
export function apiOf(url) {
  const path = new URL(url, "http://localhost").pathname;
  if (/\/chat\/completions$/.test(path)) return "openai-chat";
  if (/\/responses$/.test(path)) return "openai-responses";
  if (/\/messages$/.test(path)) return "anthropic";
  return null;
}

const CREATED = 1767225600; // 2026-01-01T00:00:00Z, seconds

/** `text` cut in pieces of `size` characters (none for an empty text), as stream deltas. */
function pieces(text, size = 8) {
  if (!text) return [];
  const out = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

const parseOr = (text, fallback) => {
  try {
    return JSON.parse(text);
  } catch {
    return fallback;
  }
};

const argsText = (args) => (typeof args === "string" ? args : JSON.stringify(args ?? {}));

/** A base64-looking opaque string, standing in for signatures and encrypted content. */
function opaque(seed, length = 96) {
  return Buffer.from(`wire:${seed}:`.padEnd(length, "~")).toString("base64");
}

/**
 * The reply normalized: ids filled in, reasoning as { text, signature,
 * encryptedContent, redacted }, usage completed from the request.
 */
function normalize(api, reply, body, seq) {
  const toolCalls = (reply.toolCalls ?? []).map((c, i) => ({
    id: c.id ?? (api === "anthropic" ? `toolu_wire${seq}_${i}` : `call_wire${seq}_${i}`),
    itemId: c.itemId ?? `fc_wire${seq}_${i}`,
    name: c.name,
    arguments: argsText(c.arguments),
    // Anthropic's tool_use input is an object: string arguments are parsed ({} if they are no JSON).
    input: typeof c.arguments === "string" ? parseOr(c.arguments, {}) : c.arguments ?? {},
  }));
  let reasoning = null;
  if (reply.reasoning != null) {
    const r = typeof reply.reasoning === "string" ? { text: reply.reasoning } : reply.reasoning;
    reasoning = {
      text: r.text ?? "",
      signature: r.signature ?? opaque(`sig${seq}`),
      encryptedContent: r.encryptedContent ?? opaque(`enc${seq}`, 160),
      redacted: r.redacted ?? null,
      id: r.id ?? `rs_wire${seq}`,
    };
  }
  const text = reply.text ?? (toolCalls.length || reasoning ? null : "");
  const u = reply.usage ?? {};
  const outputDefault = tokens(text ?? "") + toolCalls.reduce((n, c) => n + tokens(c.name) + tokens(c.arguments), 0) + tokens(reasoning?.text ?? "");
  const usage = {
    inputTokens: u.inputTokens ?? counted(body, api).total,
    outputTokens: u.outputTokens ?? outputDefault,
    cachedInputTokens: u.cachedInputTokens ?? 0,
    cacheWriteTokens: u.cacheWriteTokens ?? 0,
    reasoningTokens: u.reasoningTokens ?? tokens(reasoning?.text ?? ""),
  };
  return {
    text,
    toolCalls,
    reasoning,
    usage,
    finish: reply.finish ?? (toolCalls.length ? "tool_calls" : "stop"),
    id: reply.id,
    model: reply.model ?? body.model ?? "scripted-model",
  };
}

// ---------------------------------------------------------------- Chat Completions

function chatUsage(u) {
  return {
    prompt_tokens: u.inputTokens,
    completion_tokens: u.outputTokens,
    total_tokens: u.inputTokens + u.outputTokens,
    prompt_tokens_details: { cached_tokens: u.cachedInputTokens, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: u.reasoningTokens, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

const chatFinish = (r) => (r.finish === "length" ? "length" : r.finish === "content_filter" ? "content_filter" : r.toolCalls.length ? "tool_calls" : "stop");

/** A `chat.completion` object (POST /v1/chat/completions, stream false). */
function chatCompletion(r, seq) {
  const message = { role: "assistant", content: r.text, refusal: null, annotations: [] };
  if (r.toolCalls.length) {
    message.tool_calls = r.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
  }
  return {
    id: r.id ?? `chatcmpl-wire${seq}`,
    object: "chat.completion",
    created: CREATED + seq,
    model: r.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: chatFinish(r) }],
    usage: chatUsage(r.usage),
    service_tier: "default",
    system_fingerprint: "fp_wire",
  };
}

/** The `chat.completion.chunk` events of a streamed completion, with a usage chunk when asked. */
function chatCompletionChunks(r, seq, body) {
  const includeUsage = body.stream_options?.include_usage === true;
  const base = {
    id: r.id ?? `chatcmpl-wire${seq}`,
    object: "chat.completion.chunk",
    created: CREATED + seq,
    model: r.model,
    service_tier: "default",
    system_fingerprint: "fp_wire",
  };
  const chunk = (delta, finish_reason = null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason }],
    ...(includeUsage ? { usage: null } : {}),
  });
  const out = [chunk({ role: "assistant", content: r.text === null ? null : "", refusal: null })];
  for (const p of pieces(r.text)) out.push(chunk({ content: p }));
  r.toolCalls.forEach((c, index) => {
    out.push(chunk({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: "" } }] }));
    for (const p of pieces(c.arguments, 12)) out.push(chunk({ tool_calls: [{ index, function: { arguments: p } }] }));
  });
  out.push(chunk({}, chatFinish(r)));
  if (includeUsage) out.push({ ...base, choices: [], usage: chatUsage(r.usage) });
  return out.map((data) => ({ data }));
}

// ---------------------------------------------------------------- Responses

function responsesUsage(u) {
  return {
    input_tokens: u.inputTokens,
    input_tokens_details: { cached_tokens: u.cachedInputTokens },
    output_tokens: u.outputTokens,
    output_tokens_details: { reasoning_tokens: u.reasoningTokens },
    total_tokens: u.inputTokens + u.outputTokens,
  };
}

/** The output items of a Responses reply: reasoning, then the message, then function calls. */
function responsesOutput(r, seq, body) {
  const output = [];
  if (r.reasoning) {
    const item = { id: r.reasoning.id, type: "reasoning", summary: r.reasoning.text ? [{ type: "summary_text", text: r.reasoning.text }] : [] };
    // The API sends encrypted reasoning only when the request includes it.
    if ((body.include ?? []).includes("reasoning.encrypted_content")) item.encrypted_content = r.reasoning.encryptedContent;
    output.push(item);
  }
  if (r.text !== null) {
    output.push({
      id: `msg_wire${seq}`,
      type: "message",
      status: r.finish === "length" ? "incomplete" : "completed",
      content: [{ type: "output_text", annotations: [], logprobs: [], text: r.text }],
      role: "assistant",
    });
  }
  for (const c of r.toolCalls) {
    output.push({ id: c.itemId, type: "function_call", status: "completed", arguments: c.arguments, call_id: c.id, name: c.name });
  }
  return output;
}

/** A `response` object (POST /v1/responses, stream false), echoing the request's settings. */
function responsesResponse(r, seq, body, { status, output = responsesOutput(r, seq, body), usage = true } = {}) {
  const incomplete = r.finish === "length";
  return {
    id: r.id ?? `resp_wire${seq}`,
    object: "response",
    created_at: CREATED + seq,
    status: status ?? (incomplete ? "incomplete" : "completed"),
    background: false,
    completed_at: status === "in_progress" ? null : CREATED + seq,
    error: null,
    incomplete_details: incomplete && status !== "in_progress" ? { reason: "max_output_tokens" } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: body.max_tool_calls ?? null,
    model: r.model,
    output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    prompt_cache_key: body.prompt_cache_key ?? null,
    reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
    safety_identifier: body.safety_identifier ?? null,
    service_tier: "default",
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: { format: body.text?.format ?? { type: "text" }, verbosity: body.text?.verbosity ?? "medium" },
    tool_choice: body.tool_choice ?? "auto",
    tools: body.tools ?? [],
    top_logprobs: body.top_logprobs ?? 0,
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? "disabled",
    usage: usage ? responsesUsage(r.usage) : null,
    user: null,
    metadata: body.metadata ?? {},
  };
}

/** The server-sent events of a streamed Responses reply, `sequence_number`ed, ending in response.completed. */
function responsesEvents(r, seq, body) {
  const events = [];
  const emit = (type, data) => events.push({ event: type, data: { type, ...data, sequence_number: events.length } });
  const output = responsesOutput(r, seq, body);
  const inProgress = responsesResponse(r, seq, body, { status: "in_progress", output: [], usage: false });
  emit("response.created", { response: inProgress });
  emit("response.in_progress", { response: inProgress });
  output.forEach((item, output_index) => {
    const item_id = item.id;
    if (item.type === "reasoning") {
      emit("response.output_item.added", { output_index, item: { ...item, summary: [], ...(item.encrypted_content ? { encrypted_content: item.encrypted_content } : {}) } });
      item.summary.forEach((part, summary_index) => {
        emit("response.reasoning_summary_part.added", { item_id, output_index, summary_index, part: { type: "summary_text", text: "" } });
        for (const delta of pieces(part.text)) emit("response.reasoning_summary_text.delta", { item_id, output_index, summary_index, delta, obfuscation: "" });
        emit("response.reasoning_summary_text.done", { item_id, output_index, summary_index, text: part.text });
        emit("response.reasoning_summary_part.done", { item_id, output_index, summary_index, part });
      });
    } else if (item.type === "message") {
      emit("response.output_item.added", { output_index, item: { ...item, status: "in_progress", content: [] } });
      const part = item.content[0];
      emit("response.content_part.added", { item_id, output_index, content_index: 0, part: { ...part, text: "" } });
      for (const delta of pieces(part.text)) emit("response.output_text.delta", { item_id, output_index, content_index: 0, delta, logprobs: [], obfuscation: "" });
      emit("response.output_text.done", { item_id, output_index, content_index: 0, text: part.text, logprobs: [] });
      emit("response.content_part.done", { item_id, output_index, content_index: 0, part });
    } else if (item.type === "function_call") {
      emit("response.output_item.added", { output_index, item: { ...item, status: "in_progress", arguments: "" } });
      for (const delta of pieces(item.arguments, 12)) emit("response.function_call_arguments.delta", { item_id, output_index, delta, obfuscation: "" });
      emit("response.function_call_arguments.done", { item_id, output_index, arguments: item.arguments });
    }
    emit("response.output_item.done", { output_index, item });
  });
  const final = responsesResponse(r, seq, body, { output });
  emit(final.status === "incomplete" ? "response.incomplete" : "response.completed", { response: final });
  return events;
}

// ---------------------------------------------------------------- Anthropic Messages

const anthropicStop = (r) => (r.finish === "length" ? "max_tokens" : r.toolCalls.length ? "tool_use" : "end_turn");

function anthropicUsage(u) {
  return {
    // Anthropic's input_tokens excludes the tokens read from and written to the cache.
    input_tokens: Math.max(0, u.inputTokens - u.cachedInputTokens - u.cacheWriteTokens),
    cache_creation_input_tokens: u.cacheWriteTokens,
    cache_read_input_tokens: u.cachedInputTokens,
    cache_creation: { ephemeral_5m_input_tokens: u.cacheWriteTokens, ephemeral_1h_input_tokens: 0 },
    output_tokens: u.outputTokens,
    service_tier: "standard",
  };
}

/** The content blocks of an Anthropic reply: thinking, then text, then tool_use. */
function anthropicContent(r) {
  const content = [];
  if (r.reasoning?.redacted) content.push({ type: "redacted_thinking", data: r.reasoning.redacted });
  else if (r.reasoning) content.push({ type: "thinking", thinking: r.reasoning.text, signature: r.reasoning.signature });
  // An empty text goes out only when it is the whole reply.
  if (r.text !== null && (r.text !== "" || (content.length === 0 && r.toolCalls.length === 0))) content.push({ type: "text", text: r.text });
  for (const c of r.toolCalls) content.push({ type: "tool_use", id: c.id, name: c.name, input: c.input });
  return content;
}

/** A `message` object (POST /v1/messages, stream false). */
function anthropicMessage(r, seq) {
  return {
    id: r.id ?? `msg_01Wire${String(seq).padStart(6, "0")}`,
    type: "message",
    role: "assistant",
    model: r.model,
    content: anthropicContent(r),
    stop_reason: anthropicStop(r),
    stop_sequence: null,
    usage: anthropicUsage(r.usage),
  };
}

/** The server-sent events of a streamed Anthropic message, message_start to message_stop. */
function anthropicEvents(r, seq) {
  const message = anthropicMessage(r, seq);
  const events = [];
  const emit = (type, data) => events.push({ event: type, data: { type, ...data } });
  const usage = message.usage;
  emit("message_start", {
    message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
  });
  emit("ping", {});
  message.content.forEach((block, index) => {
    if (block.type === "thinking") {
      emit("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } });
      for (const thinking of pieces(block.thinking)) emit("content_block_delta", { index, delta: { type: "thinking_delta", thinking } });
      emit("content_block_delta", { index, delta: { type: "signature_delta", signature: block.signature } });
    } else if (block.type === "redacted_thinking") {
      emit("content_block_start", { index, content_block: block });
    } else if (block.type === "text") {
      emit("content_block_start", { index, content_block: { type: "text", text: "" } });
      for (const text of pieces(block.text)) emit("content_block_delta", { index, delta: { type: "text_delta", text } });
    } else if (block.type === "tool_use") {
      emit("content_block_start", { index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } });
      // The API opens with an empty partial_json, then streams the input's JSON text.
      emit("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: "" } });
      for (const partial_json of pieces(JSON.stringify(block.input), 12)) emit("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } });
    }
    emit("content_block_stop", { index });
  });
  emit("message_delta", {
    delta: { stop_reason: message.stop_reason, stop_sequence: null },
    usage: {
      input_tokens: usage.input_tokens,
      cache_creation_input_tokens: usage.cache_creation_input_tokens,
      cache_read_input_tokens: usage.cache_read_input_tokens,
      output_tokens: usage.output_tokens,
    },
  });
  emit("message_stop", {});
  return events;
}

// ---------------------------------------------------------------- errors

const ERROR_TEXT = {
  400: ["invalid_request_error", "invalid_request_error", "Invalid request."],
  401: ["authentication_error", "invalid_api_key", "Incorrect API key provided."],
  404: ["not_found_error", "not_found", "Not found."],
  408: ["timeout_error", "timeout", "Request timed out."],
  429: ["rate_limit_error", "rate_limit_exceeded", "Rate limit reached for requests."],
  500: ["api_error", "server_error", "The server had an error while processing your request."],
  503: ["api_error", "server_error", "The engine is currently overloaded."],
  529: ["overloaded_error", "server_error", "Overloaded"],
};

/**
 * The error body an API sends with an HTTP error status: Anthropic's
 * `{ type: "error", error: { type, message }, request_id }`, OpenAI's
 * `{ error: { message, type, param, code } }`.
 * @param {"openai-chat"|"openai-responses"|"anthropic"} api
 * @param {number} status 429, 500, 529...
 * @param {string} [message] else the API's usual text for the status
 * @param {number} [seq] the number the request id carries
 */
export function errorBody(api, status, message, seq = 1) {
  const [anthropicType, openaiCode, text] = ERROR_TEXT[status] ?? ["api_error", "server_error", `HTTP ${status}`];
  if (api === "anthropic") return { type: "error", error: { type: anthropicType, message: message ?? text }, request_id: `req_wire${seq}` };
  const type = status === 429 ? "requests" : status >= 500 ? "server_error" : "invalid_request_error";
  return { error: { message: message ?? text, type, param: null, code: status >= 500 && status !== 503 ? null : openaiCode } };
}

// ---------------------------------------------------------------- the fetch

/**
 * The success body the API sends for a scripted reply: the JSON object, or,
 * when the request streams (`body.stream === true`, or `stream` given), the
 * list of server-sent events `{ event?, data }` (Chat Completions ends with
 * `data: [DONE]`). For tests that want a reply's wire form without a fetch.
 * @param {"openai-chat"|"openai-responses"|"anthropic"} api
 * @param {object} reply a scripted reply (text, toolCalls, reasoning, usage, finish, id, model)
 * @param {{ body?: object, seq?: number, stream?: boolean }} [options] `body`: the request it
 *   answers (model, include, stream_options... are echoed; usage defaults count it); `seq`:
 *   the number the generated ids carry
 * @returns {object | { event?: string, data: object | string }[]}
 */
export function replyBody(api, reply, { body = {}, seq = 1, stream = body.stream === true } = {}) {
  const r = normalize(api, reply, body, seq);
  if (api === "openai-chat") return stream ? [...chatCompletionChunks(r, seq, body), { data: "[DONE]" }] : chatCompletion(r, seq);
  if (api === "openai-responses") return stream ? responsesEvents(r, seq, body) : responsesResponse(r, seq, body);
  if (api === "anthropic") return stream ? anthropicEvents(r, seq) : anthropicMessage(r, seq);
  throw new Error(`replyBody: unknown api ${api}`);
}

/** Server-sent events as text chunks: `event: <name>` (when named) and `data: <json>` lines, a blank line after each. */
export function sseText(events) {
  return events.map(({ event, data }) => (event ? `event: ${event}\n` : "") + `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
}

function streamResponse(chunks, headers) {
  const encoder = new TextEncoder();
  const body = new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(encoder.encode(c));
      controller.close();
    },
  });
  return new Response(body, { status: 200, headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", ...headers } });
}

const jsonResponse = (status, value, headers) =>
  new Response(typeof value === "string" ? value : JSON.stringify(value), { status, headers: { "content-type": "application/json", ...headers } });

/**
 * A scripted provider API behind a fetch.
 *
 * `reply` scripts the answers: a function `(request) => reply` (may be
 * async), a list of replies used in order (one per request; running out is
 * an error), or one reply used for every request. `request` is the captured
 * `{ api, url, method, headers, body, bodyText, index }` (`body` the parsed
 * JSON, null if the body is not JSON; `bodyText` the body as sent). A
 * reply is provider-neutral:
 *   { text?: string,                     // the assistant's text
 *     toolCalls?: [{ id?, name, arguments: object | string, itemId? }],
 *                                        // ids default to call_wire<n>_<i> (OpenAI),
 *                                        // toolu_wire<n>_<i> (Anthropic); itemId: Responses fc_ id
 *     reasoning?: string | { text, signature?, encryptedContent?, redacted?, id? },
 *                                        // Anthropic thinking (or redacted_thinking) block with a
 *                                        // signature; Responses reasoning item with a summary (and
 *                                        // encrypted_content when the request `include`s it);
 *                                        // Chat Completions: reasoning tokens only
 *     usage?: { inputTokens, outputTokens, cachedInputTokens, cacheWriteTokens, reasoningTokens },
 *                                        // inputTokens: the whole prompt, cached tokens included
 *                                        // (Anthropic input_tokens gets the uncached rest);
 *                                        // defaults: counted(body).total, the o200k count of the
 *                                        // text + tool calls + reasoning, 0, 0, reasoning's count
 *     finish?: "length" | "content_filter",  // else stop / tool calls
 *     id?, model? }                      // response id; model (default: the request's)
 * or an HTTP error: { status: 429 | 500 | 529 | ..., message?, retryAfter? (s), retryAfterMs?, headers? }
 * with the API's own error body; or `{ rawBody: string | object, status?, contentType?, headers? }`
 * sent as is (content-type application/json unless given, e.g. "text/event-stream"
 * for a hand-written stream).
 * Requests with `stream: true` get the API's server-sent events.
 *
 * @param {{ reply: Function | object[] | object }} options
 * @returns {{ fetch: typeof fetch, requests: object[] }} `requests` gets every
 *   request, in order, as `{ api: "openai-chat" | "openai-responses" | "anthropic" | null,
 *   url, method, headers (lower-cased names), body, bodyText, index, reply, status }`
 *   (`reply`: the scripted reply used; `status`: the HTTP status answered; api null
 *   and a 404 for any other route)
 */
export function scriptedApi({ reply } = {}) {
  const requests = [];
  const queue = Array.isArray(reply) ? [...reply] : null;

  async function nextReply(request) {
    if (typeof reply === "function") return reply(request);
    if (queue) {
      if (queue.length === 0) throw new Error(`scriptedApi: no scripted reply left for request #${request.index} (${request.api})`);
      return queue.shift();
    }
    if (reply) return reply;
    throw new Error("scriptedApi: no reply scripted");
  }

  async function fetch(input, init = {}) {
    const req = new Request(input, init.body && typeof init.body.getReader === "function" ? { ...init, duplex: "half" } : init);
    if (init.signal?.aborted) throw init.signal.reason ?? new DOMException("aborted", "AbortError");
    const raw = req.method === "GET" || req.method === "HEAD" ? "" : await req.text();
    let body = null;
    try {
      body = raw ? JSON.parse(raw) : null;
    } catch {
      body = null;
    }
    const headers = Object.fromEntries([...req.headers].map(([k, v]) => [k.toLowerCase(), v]));
    const api = apiOf(req.url);
    const index = requests.length;
    const request = { api, url: req.url, method: req.method, headers, body, bodyText: raw, index };
    requests.push(request);
    if (!api || req.method !== "POST") {
      request.status = 404;
      return jsonResponse(404, { error: { message: `scriptedApi: no route for ${req.method} ${req.url}`, type: "invalid_request_error", param: null, code: "not_found" } });
    }
    const scripted = await nextReply(request);
    request.reply = scripted;
    const seq = index + 1;
    const requestId = api === "anthropic" ? { "request-id": `req_wire${seq}` } : { "x-request-id": `req_wire${seq}` };
    if (scripted.rawBody !== undefined) {
      request.status = scripted.status ?? 200;
      return jsonResponse(request.status, scripted.rawBody, { ...requestId, ...(scripted.contentType ? { "content-type": scripted.contentType } : {}), ...scripted.headers });
    }
    if (scripted.status && scripted.status !== 200) {
      request.status = scripted.status;
      const retry = {};
      if (scripted.retryAfter !== undefined) retry["retry-after"] = String(scripted.retryAfter);
      if (scripted.retryAfterMs !== undefined) retry["retry-after-ms"] = String(scripted.retryAfterMs);
      // Anthropic's SDK retries only when told it may; it says so on retryable errors.
      const shouldRetry = api === "anthropic" ? { "x-should-retry": String(scripted.status === 429 || scripted.status >= 500) } : {};
      return jsonResponse(scripted.status, errorBody(api, scripted.status, scripted.message, seq), { ...requestId, ...shouldRetry, ...retry, ...scripted.headers });
    }
    request.status = 200;
    const out = replyBody(api, scripted, { body: body ?? {}, seq });
    return Array.isArray(out) ? streamResponse(sseText(out), requestId) : jsonResponse(200, out, requestId);
  }

  return { fetch, requests };
}

// ---------------------------------------------------------------- reading requests

const flatText = (content) => {
  if (content == null) return "";
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p === "string" ? p : p?.text ?? (p?.content ? flatText(p.content) : ""))).join("");
  return JSON.stringify(content);
};

/**
 * The tool calls a request body carries in its history, provider-neutral.
 * @param {{ api: string, body: object }} request a captured request
 * @returns {{ id: string, name: string, arguments: object }[]} in order
 */
export function toolCallsIn({ api, body }) {
  const out = [];
  const parse = (s) => {
    try {
      return JSON.parse(s || "{}");
    } catch {
      return s;
    }
  };
  if (api === "openai-chat") {
    for (const m of body.messages ?? []) for (const c of m.tool_calls ?? []) out.push({ id: c.id, name: c.function?.name, arguments: parse(c.function?.arguments) });
  } else if (api === "openai-responses") {
    for (const i of Array.isArray(body.input) ? body.input : []) if (i.type === "function_call") out.push({ id: i.call_id, name: i.name, arguments: parse(i.arguments) });
  } else if (api === "anthropic") {
    for (const m of body.messages ?? []) for (const b of Array.isArray(m.content) ? m.content : []) if (b.type === "tool_use") out.push({ id: b.id, name: b.name, arguments: b.input });
  }
  return out;
}

/**
 * The tool results a request body carries, provider-neutral, their content flattened to text.
 * @param {{ api: string, body: object }} request a captured request
 * @returns {{ id: string, output: string, isError?: boolean }[]} in order
 */
export function toolResultsIn({ api, body }) {
  const out = [];
  if (api === "openai-chat") {
    for (const m of body.messages ?? []) if (m.role === "tool") out.push({ id: m.tool_call_id, output: flatText(m.content) });
  } else if (api === "openai-responses") {
    for (const i of Array.isArray(body.input) ? body.input : []) if (i.type === "function_call_output") out.push({ id: i.call_id, output: flatText(i.output) });
  } else if (api === "anthropic") {
    for (const m of body.messages ?? []) {
      for (const b of Array.isArray(m.content) ? m.content : []) {
        if (b.type === "tool_result") out.push({ id: b.tool_use_id, output: flatText(b.content), ...(b.is_error ? { isError: true } : {}) });
      }
    }
  }
  return out;
}
