// Streaming in runCompiled (issue 36, item 4): the model may answer with a
// stream, and each provider's own SDK stream is read as it comes (OpenAI's and
// Anthropic's SDK Stream over their server-sent events, the AI SDK's
// streamText fullStream from its mock model, Gemini's chunks as
// GenerateContentResponse objects, plain text), recognised from the chunks or
// named with streamFormat; onDelta gets each piece; tool calls run when the
// stream is whole; an abort mid-reply records the text received as partial
// and no orphan call.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Stream as OpenAiStream } from "openai/streaming";
import { Stream as AnthropicStream } from "@anthropic-ai/sdk/streaming";
import { jsonSchema, streamText, tool } from "ai";
import { MockLanguageModelV4, convertArrayToReadableStream } from "ai/test";
import { GenerateContentResponse } from "@google/genai";
import { Session, runCompiled } from "agent-context-compiler";
import { rejectsWithCode } from "./helpers.mjs";

/** Server-sent events as a provider sends them. */
const sse = (events) => new Response(events.map(([event, data]) => `${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`).join(""));

const openAiStream = (chunks) => OpenAiStream.fromSSEResponse(sse([...chunks.map((c) => [null, c]), [null, "[DONE]"]]), new AbortController());
const anthropicStream = (events) => AnthropicStream.fromSSEResponse(sse(events.map((e) => [e.type, e])), new AbortController());

const chatCompletion = {
  call: [
    { choices: [{ index: 0, delta: { role: "assistant", content: "Reading " }, finish_reason: null }] },
    { choices: [{ index: 0, delta: { content: "the log." }, finish_reason: null }] },
    { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "read_logs", arguments: "" } }] }, finish_reason: null }] },
    { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"lines":' } }] }, finish_reason: null }] },
    { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: "3}" } }] }, finish_reason: null }] },
    { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] },
    { choices: [], usage: { prompt_tokens: 90, completion_tokens: 12 } },
  ],
  answer: [
    { choices: [{ index: 0, delta: { content: "Three lines, " }, finish_reason: null }] },
    { choices: [{ index: 0, delta: { content: "all ok." }, finish_reason: "stop" }] },
  ],
};

const anthropicEvents = {
  call: [
    { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude", content: [], stop_reason: null, usage: { input_tokens: 40, cache_read_input_tokens: 50, cache_creation_input_tokens: 0, output_tokens: 1 } } },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Reading the log." } },
    { type: "content_block_stop", index: 0 },
    { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_1", name: "read_logs", input: {} } },
    { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"lines"' } },
    { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: ": 3}" } },
    { type: "content_block_stop", index: 1 },
    { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 20 } },
    { type: "message_stop" },
  ],
  answer: [
    { type: "message_start", message: { id: "msg_2", type: "message", role: "assistant", model: "claude", content: [], stop_reason: null, usage: { input_tokens: 60, output_tokens: 1 } } },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Three lines, all ok." } },
    { type: "content_block_stop", index: 0 },
    { type: "message_stop" },
  ],
};

const responsesEvents = {
  call: [
    { type: "response.created", sequence_number: 0, response: { id: "resp_1" } },
    { type: "response.output_text.delta", sequence_number: 1, item_id: "msg_1", output_index: 0, content_index: 0, delta: "Reading the log." },
    { type: "response.output_item.added", sequence_number: 2, output_index: 1, item: { type: "function_call", id: "fc_1", call_id: "call_7", name: "read_logs", arguments: "" } },
    { type: "response.function_call_arguments.delta", sequence_number: 3, item_id: "fc_1", output_index: 1, delta: '{"lines":3}' },
    { type: "response.function_call_arguments.done", sequence_number: 4, item_id: "fc_1", output_index: 1, arguments: '{"lines":3}' },
    { type: "response.completed", sequence_number: 5, response: { id: "resp_1", usage: { input_tokens: 70, output_tokens: 9, input_tokens_details: { cached_tokens: 0 } } } },
  ],
  answer: [{ type: "response.output_text.delta", sequence_number: 1, item_id: "msg_2", output_index: 0, content_index: 0, delta: "Three lines, all ok." }],
};

async function* geminiStream(chunks) {
  for (const c of chunks) yield Object.assign(new GenerateContentResponse(), c);
}
const geminiChunks = {
  call: [
    { candidates: [{ content: { role: "model", parts: [{ text: "Reading the log." }] } }] },
    { candidates: [{ content: { role: "model", parts: [{ functionCall: { id: "fc-1", name: "read_logs", args: { lines: 3 } } }] }, finishReason: "STOP" }], usageMetadata: { promptTokenCount: 55, candidatesTokenCount: 8 } },
  ],
  answer: [{ candidates: [{ content: { role: "model", parts: [{ text: "Three lines, all ok." }] } }] }],
};

/** The AI SDK's own streamText over its mock model: its fullStream. */
function aiSdkStream(parts) {
  const model = new MockLanguageModelV4({ doStream: async () => ({ stream: convertArrayToReadableStream(parts) }) });
  const tools = { read_logs: tool({ description: "Reads the log", inputSchema: jsonSchema({ type: "object", properties: { lines: { type: "integer" } } }) }) };
  return streamText({ model, prompt: "Why?", tools }).fullStream;
}
const finish = (unified) => ({ type: "finish", finishReason: { unified, raw: unified }, usage: { inputTokens: { total: 30, noCache: 30, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } } });
const aiSdkParts = {
  call: [
    { type: "stream-start", warnings: [] },
    { type: "text-start", id: "t1" },
    { type: "text-delta", id: "t1", delta: "Reading the log." },
    { type: "text-end", id: "t1" },
    { type: "tool-input-start", id: "call_3", toolName: "read_logs" },
    { type: "tool-input-delta", id: "call_3", delta: '{"lines":3}' },
    { type: "tool-input-end", id: "call_3" },
    { type: "tool-call", toolCallId: "call_3", toolName: "read_logs", input: '{"lines":3}' },
    finish("tool-calls"),
  ],
  answer: [{ type: "stream-start", warnings: [] }, { type: "text-start", id: "t2" }, { type: "text-delta", id: "t2", delta: "Three lines, all ok." }, { type: "text-end", id: "t2" }, finish("stop")],
};

const streams = {
  "openai": { format: "openai", make: (s) => openAiStream(chatCompletion[s]) },
  "openai-responses": { format: "openai-responses", make: (s) => (async function* () { yield* responsesEvents[s]; })() },
  "anthropic": { format: "anthropic", make: (s) => anthropicStream(anthropicEvents[s]) },
  "gemini": { format: "gemini", make: (s) => geminiStream(geminiChunks[s]) },
  "ai-sdk": { format: "ai-sdk", make: (s) => aiSdkStream(aiSdkParts[s]) },
};

const readLogs = async (_name, { lines }) => Array.from({ length: lines }, (_, i) => `line ${i} ok`).join("\n");
const toolSpecs = [{ name: "read_logs", description: "Reads the log", parameters: { type: "object", properties: { lines: { type: "integer" } } } }];

for (const [name, { format, make }] of Object.entries(streams)) {
  test(`${name}: the provider's own stream is read as it comes, the call runs when whole`, async () => {
    const deltas = [];
    const session = new Session();
    const result = await runCompiled("Why did the job fail?", {
      budget: 4000, session, format, tools: toolSpecs, bridge: readLogs,
      model: (_messages, { step }) => make(step === 0 ? "call" : "answer"),
      onDelta: (d) => deltas.push(d),
    });
    assert.equal(result.result, "Three lines, all ok.");
    assert.equal(deltas[0].type, "text");
    const callDeltas = deltas.filter((d) => d.type === "tool-call");
    assert.ok(callDeltas.length >= 1);
    assert.equal(callDeltas[0].name, "read_logs");
    assert.deepEqual(JSON.parse(callDeltas.map((d) => d.argumentsDelta).join("")), { lines: 3 });
    assert.equal(deltas.filter((d) => d.type === "text").map((d) => d.text).join(""), "Reading the log.Three lines, all ok.");
    const events = session.eventLog.events;
    const outputs = events.filter((e) => e.kind === "assistant_output").map((e) => e.data.text);
    assert.deepEqual(outputs, ["Reading the log.", "Three lines, all ok."]);
    const success = events.find((e) => e.kind === "tool_success");
    assert.equal(success.data.result, "line 0 ok\nline 1 ok\nline 2 ok");
    const usage = events.filter((e) => e.kind === "model_usage");
    assert.ok(usage.length >= 1, "the stream's usage is recorded");
    assert.ok(usage[0].data.inputTokens > 0);
  });
}

test("plain text pieces, a ReadableStream, and streamFormat", async () => {
  const deltas = [];
  const r = await runCompiled("Hi", {
    budget: 1000,
    model: () => new ReadableStream({ start(c) { c.enqueue("Hel"); c.enqueue("lo!"); c.close(); } }),
    onDelta: (d) => deltas.push(d),
  });
  assert.equal(r.result, "Hello!");
  assert.deepEqual(deltas, [{ type: "text", text: "Hel" }, { type: "text", text: "lo!" }]);
  // Named: a chunk nothing recognises is read as that format.
  const named = await runCompiled("Hi", {
    budget: 1000, streamFormat: "anthropic",
    model: async function* () { yield { type: "vendor_extension" }; yield* anthropicEvents.answer; },
  });
  assert.equal(named.result, "Three lines, all ok.");
  await rejectsWithCode(() => runCompiled("Hi", { budget: 1000, model: async function* () { yield { what: 1 }; } }), "MODEL_FAILED", "streamFormat");
  await rejectsWithCode(() => runCompiled("Hi", { budget: 1000, streamFormat: "sse", model: () => "x" }), "INVALID_ARGUMENT");
  await rejectsWithCode(() => runCompiled("Hi", { budget: 1000, onDelta: 3, model: () => "x" }), "INVALID_ARGUMENT");
});

test("an abort mid-reply records the text received as partial, drops the unfinished call and stops the source", async () => {
  const controller = new AbortController();
  let returned = false;
  let modelSignal;
  const session = new Session();
  // Text, and a call whose arguments never finish; then the provider goes quiet.
  const chunks = chatCompletion.call.slice(0, 4);
  const source = {
    [Symbol.asyncIterator]() {
      return {
        next: () => (chunks.length > 0 ? Promise.resolve({ done: false, value: chunks.shift() }) : new Promise(() => {})),
        return: async () => {
          returned = true;
          return { done: true };
        },
      };
    },
  };
  const run = runCompiled("Why?", {
    budget: 2000, session, signal: controller.signal, tools: toolSpecs, bridge: readLogs,
    model: (_messages, { signal }) => {
      modelSignal = signal;
      return source;
    },
    onDelta: (d) => { if (d.type === "tool-call") setTimeout(() => controller.abort(new Error("stop")), 5); },
  });
  await rejectsWithCode(() => run, "ABORTED");
  const events = session.eventLog.events;
  assert.deepEqual(events.map((e) => e.kind), ["user_input", "assistant_output"]);
  assert.deepEqual(events[1].data, { text: "Reading the log.", partial: true });
  await new Promise((r) => setTimeout(r, 10));
  assert.ok(returned, "the source's iterator was returned");
  assert.equal(modelSignal.aborted, true, "the model call's signal was aborted (a fetch behind the stream stops)");
});

test("a stream that throws, a chunk that is not JSON and an onDelta that throws keep what was said", async () => {
  const session = new Session();
  await rejectsWithCode(() => runCompiled("Why?", {
    budget: 2000, session,
    model: async function* () { yield "Partial answer"; throw new Error("socket hang up"); },
  }), "MODEL_FAILED", "socket hang up");
  assert.deepEqual(session.eventLog.events.at(-1).data, { text: "Partial answer", partial: true });

  const s2 = new Session();
  await rejectsWithCode(() => runCompiled("Why?", {
    budget: 2000, session: s2,
    model: async function* () { yield "Before"; yield 10n; },
  }), "MODEL_FAILED");
  assert.deepEqual(s2.eventLog.events.at(-1).data, { text: "Before", partial: true });

  const s3 = new Session();
  await rejectsWithCode(() => runCompiled("Why?", {
    budget: 2000, session: s3,
    model: () => openAiStream(chatCompletion.answer),
    onDelta: (d) => { if (d.text === "all ok.") throw new Error("the page is gone"); },
  }), "HANDLER_FAILED", "the page is gone");
  assert.deepEqual(s3.eventLog.events.at(-1).data, { text: "Three lines, all ok.", partial: true });
});
