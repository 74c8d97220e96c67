// Self-test of the wire harness: each framework's real provider code (AI SDK
// + @ai-sdk/openai Responses and Chat Completions, AI SDK + @ai-sdk/anthropic,
// LangChain ChatOpenAI and ChatAnthropic under createAgent, the Agents SDK's
// OpenAIResponsesModel under run) runs a two-step tool loop over the scripted
// fetch; the requests it sends are captured and checked against the
// provider's own request types.
import { test } from "node:test";
import assert from "node:assert/strict";
import { generateText, streamText, tool as aiTool, jsonSchema, isStepCount } from "ai";
import { createOpenAI } from "@ai-sdk/openai";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createAgent } from "langchain";
import { tool as lcTool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { ChatAnthropic } from "@langchain/anthropic";
import { Agent, run, tool as agentsTool, setTracingDisabled } from "@openai/agents";
import { OpenAIResponsesModel } from "@openai/agents-openai";
import OpenAI from "openai";
import { scriptedApi, extraFields, counted, tokens, toolCallsIn, toolResultsIn, apiOf, replyBody, sseText, errorBody, REQUEST_KEYS } from "./index.mjs";

setTracingDisabled(true);

const SYSTEM = "You are an SRE.";
const QUESTION = "Why did the nightly job fail?";
const ANSWER = "Volume vol-7781 ran over its quota.";
const LOG = (turn) => `02:41 job step 41 ERROR volume vol-7781 over quota (turn ${turn})`;
const SCHEMA = { type: "object", properties: { turn: { type: "integer" } }, required: ["turn"], additionalProperties: false };

/** The two-step script: a read_log call with `id`, then the answer; usage scripted per step. */
const script = (id, extra = {}) => [
  { toolCalls: [{ id, name: "read_log", arguments: { turn: 1 } }], usage: { inputTokens: 100, outputTokens: 7, cachedInputTokens: 40 }, ...extra },
  { text: ANSWER, usage: { inputTokens: 130, outputTokens: 9 } },
];

/**
 * The checks every path shares: two requests to `api`; the first carries no
 * tool result, the second carries the call and its result under the scripted
 * id; every body's undeclared keys are exactly `extras[i]` (none by default).
 */
function assertLoop(requests, api, id, extras = [[], []]) {
  assert.equal(requests.length, 2, `two requests, got ${requests.length}`);
  assert.deepEqual(requests.map((r) => r.api), [api, api]);
  assert.deepEqual(requests.map((r) => r.status), [200, 200]);
  assert.deepEqual(toolResultsIn(requests[0]), []);
  assert.deepEqual(toolCallsIn(requests[1]), [{ id, name: "read_log", arguments: { turn: 1 } }]);
  const results = toolResultsIn(requests[1]);
  assert.equal(results.length, 1);
  assert.equal(results[0].id, id, "the tool call id round-trips into the tool result");
  assert.equal(results[0].output, LOG(1));
  for (const r of requests) {
    const why = `undeclared keys in ${r.api} request #${r.index}: ${JSON.stringify(r.body)}`;
    assert.deepEqual(extraFields(r.api, r.body), extras[r.index], why);
    // Anthropic requests also against the types of the API version they name.
    assert.deepEqual(extraFields(r), extras[r.index], why);
  }
}

// ---------------------------------------------------------------- AI SDK

const aiTools = {
  read_log: aiTool({ description: "Reads the nightly job's log of a turn", inputSchema: jsonSchema(SCHEMA), execute: async ({ turn }) => LOG(turn) }),
};

const aiPaths = {
  "openai responses": { api: "openai-responses", id: "call_wireA", model: (fetch) => createOpenAI({ apiKey: "test", fetch })("gpt-4.1") },
  "openai chat": { api: "openai-chat", id: "call_wireA", model: (fetch) => createOpenAI({ apiKey: "test", fetch }).chat("gpt-4.1") },
  anthropic: { api: "anthropic", id: "toolu_wireA", model: (fetch) => createAnthropic({ apiKey: "test", fetch })("claude-sonnet-4-5") },
};

for (const [name, path] of Object.entries(aiPaths)) {
  for (const call of [generateText, streamText]) {
    test(`AI SDK ${call.name} + ${name}: a tool loop over the wire`, async () => {
      const { fetch, requests } = scriptedApi({ reply: script(path.id) });
      const result = await call({ model: path.model(fetch), system: SYSTEM, prompt: QUESTION, tools: aiTools, stopWhen: isStepCount(3), maxRetries: 0 });
      assert.equal(await result.text, ANSWER);
      assertLoop(requests, path.api, path.id);
      assert.equal(requests[0].body.stream === true, call === streamText, "streamText streams, generateText does not");
      const steps = await result.steps;
      assert.deepEqual(steps.map((s) => s.usage.inputTokens), [100, 130], "each step's usage, input tokens cached ones included");
      assert.deepEqual(steps.map((s) => s.usage.outputTokens), [7, 9]);
      assert.equal(steps[0].usage.inputTokenDetails.cacheReadTokens, 40);
      assert.equal((await result.totalUsage).inputTokens, 230);
      assert.equal((await result.usage).inputTokens, 230, "AI SDK 7: result.usage sums the steps");
    });
  }
}

test("AI SDK generateText retries a scripted 429 (then a 529 from Anthropic) and the harness captures every attempt", async () => {
  for (const [path, status] of [[aiPaths["openai responses"], 429], [aiPaths.anthropic, 529]]) {
    const { fetch, requests } = scriptedApi({ reply: [{ status, retryAfterMs: 5 }, { text: ANSWER }] });
    const result = await generateText({ model: path.model(fetch), prompt: QUESTION, maxRetries: 2 });
    assert.equal(result.text, ANSWER);
    assert.deepEqual(requests.map((r) => r.status), [status, 200]);
    assert.deepEqual(requests[0].body, requests[1].body, "the retry resends the same body");
    // Unscripted usage defaults to the o200k count of what the request sends.
    assert.equal(result.usage.inputTokens, counted(requests[1]).total);
  }
  const { fetch, requests } = scriptedApi({ reply: { status: 429, retryAfterMs: 1 } });
  await assert.rejects(generateText({ model: aiPaths["openai chat"].model(fetch), prompt: QUESTION, maxRetries: 1 }), /Rate limit/);
  assert.equal(requests.length, 2, "one try and one retry");
});

test("AI SDK + @ai-sdk/anthropic sends the scripted thinking block back with its signature", async () => {
  const { fetch, requests } = scriptedApi({ reply: script("toolu_wireA", { reasoning: { text: "Read the log first.", signature: "sig-A" } }) });
  const result = await generateText({
    model: aiPaths.anthropic.model(fetch), system: SYSTEM, prompt: QUESTION, tools: aiTools, stopWhen: isStepCount(3), maxRetries: 0,
    providerOptions: { anthropic: { thinking: { type: "enabled", budgetTokens: 1024 } } },
  });
  assert.equal(result.text, ANSWER);
  assertLoop(requests, "anthropic", "toolu_wireA");
  assert.deepEqual(requests[0].body.thinking, { type: "enabled", budget_tokens: 1024 });
  assert.deepEqual(requests[1].body.messages[1].content[0], { type: "thinking", thinking: "Read the log first.", signature: "sig-A" });
});

test("Anthropic's 1.x request types have no temperature: extraFields(api, body) reports it, extraFields(request) goes by anthropic-version", async () => {
  const { fetch, requests } = scriptedApi({ reply: { text: ANSWER } });
  await generateText({ model: aiPaths.anthropic.model(fetch), prompt: QUESTION, temperature: 0, maxRetries: 0 });
  const [request] = requests;
  assert.equal(request.headers["anthropic-version"], "2023-06-01");
  assert.equal(request.body.temperature, 0);
  assert.deepEqual(extraFields(request.api, request.body), [{ path: "", key: "temperature", reason: "not declared" }]);
  assert.deepEqual(extraFields(request), []);
  assert.deepEqual(extraFields("anthropic", request.body, { anthropicVersion: "2023-06-01" }), []);
});

// ---------------------------------------------------------------- LangChain

const readLog = lcTool(async ({ turn }) => LOG(turn), { name: "read_log", description: "Reads the nightly job's log of a turn", schema: SCHEMA });

async function runLangChain(model) {
  const agent = createAgent({ model, tools: [readLog], systemPrompt: SYSTEM });
  const { messages } = await agent.invoke({ messages: [{ role: "user", content: QUESTION }] });
  return messages;
}

const textOf = (m) => (typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? "").join(""));

/** The LangChain checks: the final text, and each AI message's usage_metadata. */
function assertLangChainUsage(messages) {
  const ai = messages.filter((m) => m.getType() === "ai");
  assert.equal(ai.length, 2);
  assert.equal(textOf(ai[1]), ANSWER);
  assert.deepEqual(ai.map((m) => m.usage_metadata.input_tokens), [100, 130]);
  assert.deepEqual(ai.map((m) => m.usage_metadata.output_tokens), [7, 9]);
  assert.equal(ai[0].usage_metadata.input_token_details.cache_read, 40);
}

test("LangChain createAgent + ChatOpenAI (Chat Completions, its default): a tool loop over the wire", async () => {
  const { fetch, requests } = scriptedApi({ reply: script("call_wireA") });
  const messages = await runLangChain(new ChatOpenAI({ model: "gpt-4.1", apiKey: "test", maxRetries: 0, configuration: { fetch } }));
  assertLangChainUsage(messages);
  // @langchain/openai copies the ToolMessage's `name` ("read_log") onto the
  // tool message it sends; ChatCompletionToolMessageParam declares no `name`.
  assertLoop(requests, "openai-chat", "call_wireA", [[], [{ path: "messages[3]", key: "name", reason: "not declared" }]]);
  assert.equal(requests[1].body.messages[3].role, "tool");
  assert.equal(requests[0].body.stream, false);
});

test("LangChain createAgent + ChatOpenAI with useResponsesApi: a tool loop over the Responses API", async () => {
  const { fetch, requests } = scriptedApi({ reply: script("call_wireA") });
  const messages = await runLangChain(new ChatOpenAI({ model: "gpt-4.1", apiKey: "test", maxRetries: 0, useResponsesApi: true, configuration: { fetch } }));
  assertLangChainUsage(messages);
  assertLoop(requests, "openai-responses", "call_wireA");
});

test("LangChain createAgent + ChatAnthropic: a tool loop over the wire", async () => {
  const { fetch, requests } = scriptedApi({ reply: script("toolu_wireA") });
  const messages = await runLangChain(new ChatAnthropic({ model: "claude-sonnet-4-5", apiKey: "test", maxRetries: 0, clientOptions: { fetch } }));
  assertLangChainUsage(messages);
  assertLoop(requests, "anthropic", "toolu_wireA");
  assert.deepEqual(requests[0].body.system, [{ type: "text", text: SYSTEM }]);
});

for (const streaming of [false, true]) {
  test(`LangChain ChatAnthropic with thinking${streaming ? ", streaming" : ""}: the next request carries the thinking block and its signature`, async () => {
    const { fetch, requests } = scriptedApi({ reply: script("toolu_wireA", { reasoning: { text: "Read the log first.", signature: "sig-A" } }) });
    const model = new ChatAnthropic({
      model: "claude-sonnet-4-5", apiKey: "test", maxRetries: 0, streaming,
      thinking: { type: "enabled", budget_tokens: 1024 }, clientOptions: { fetch },
    });
    const messages = await runLangChain(model);
    assert.equal(textOf(messages.at(-1)), ANSWER);
    assertLoop(requests, "anthropic", "toolu_wireA");
    assert.equal(requests[0].body.stream, streaming);
    assert.deepEqual(requests[0].body.thinking, { type: "enabled", budget_tokens: 1024 });
    const assistant = requests[1].body.messages.find((m) => m.role === "assistant");
    assert.deepEqual(assistant.content[0], { type: "thinking", thinking: "Read the log first.", signature: "sig-A" });
    assert.equal(assistant.content[1].type, "tool_use");
    const ai = messages.filter((m) => m.getType() === "ai");
    assert.equal(ai[1].usage_metadata.input_tokens, 130);
  });
}

// ---------------------------------------------------------------- OpenAI Agents SDK

const agentsReadLog = agentsTool({
  name: "read_log", description: "Reads the nightly job's log of a turn", parameters: SCHEMA, strict: true,
  execute: async ({ turn }) => LOG(turn),
});

for (const stream of [false, true]) {
  test(`Agents SDK run${stream ? " (streamed)" : ""} + OpenAIResponsesModel: a tool loop over the wire`, async () => {
    const { fetch, requests } = scriptedApi({ reply: script("call_wireA") });
    const client = new OpenAI({ apiKey: "test", fetch, maxRetries: 0 });
    const agent = new Agent({ name: "sre", instructions: SYSTEM, model: new OpenAIResponsesModel(client, "gpt-4.1"), tools: [agentsReadLog] });
    const result = await run(agent, QUESTION, { stream });
    if (stream) {
      for await (const _event of result);
      await result.completed;
    }
    assert.equal(result.finalOutput, ANSWER);
    assertLoop(requests, "openai-responses", "call_wireA");
    assert.equal(requests[0].body.instructions, SYSTEM);
    assert.equal(requests[0].body.stream, stream);
    assert.equal(result.state.usage.inputTokens, 230);
    assert.equal(result.state.usage.outputTokens, 16);
    assert.deepEqual(result.rawResponses.map((r) => r.usage.inputTokens), [100, 130]);
    assert.equal(result.rawResponses[0].usage.inputTokensDetails[0].cached_tokens, 40);
  });
}

// ---------------------------------------------------------------- the harness itself

test("extraFields reports an unknown key inside a Responses input item, a content part, a message and a tool", () => {
  const body = {
    model: "gpt-4.1",
    input: [
      { role: "user", content: [{ type: "input_text", text: QUESTION }] },
      { type: "function_call", call_id: "call_1", name: "read_log", arguments: "{}", agent_context_compiler: { eventId: 7 } },
      { type: "function_call_output", call_id: "call_1", output: "ok" },
      { type: "item_reference", id: "msg_1" },
    ],
    tools: [{ type: "function", name: "read_log", parameters: SCHEMA, strict: true }],
  };
  assert.deepEqual(extraFields("openai-responses", body), [{ path: "input[1]", key: "agent_context_compiler", reason: "not declared" }]);
  // A user message is no item_reference: its id is not declared.
  body.input[0].id = "msg_0";
  body.input[0].content[0].cache_control = { type: "ephemeral" };
  body.tools[0].input_schema = SCHEMA;
  body.input.push({ type: "made_up_item" });
  assert.deepEqual(extraFields("openai-responses", body), [
    { path: "input[0].content[0]", key: "cache_control", reason: "not declared" },
    { path: "input[0]", key: "id", reason: "not declared" },
    { path: "input[1]", key: "agent_context_compiler", reason: "not declared" },
    { path: "input[4]", key: "type", reason: 'no declared variant with type="made_up_item"' },
    { path: "tools[0]", key: "input_schema", reason: "not declared" },
  ]);
  assert.deepEqual(
    extraFields("openai-chat", { model: "m", messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" }, meta: 1 }] }] }),
    [{ path: "messages[0].tool_calls[0]", key: "meta", reason: "not declared" }],
  );
  assert.deepEqual(
    extraFields("anthropic", { model: "m", max_tokens: 1, messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: "ok", cache_control: { type: "ephemeral", ttl: "5m" } }], id: 3 }] }),
    [{ path: "messages[0]", key: "id", reason: "not declared" }],
  );
  // Free-form values (JSON schemas, tool inputs, metadata) are not looked into.
  assert.deepEqual(extraFields("anthropic", { model: "m", max_tokens: 1, metadata: { user_id: "u" }, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input: { anything: { goes: 1 } } }] }] }), []);
});

test("REQUEST_KEYS holds the request types' keys", () => {
  const keys = (api, name) => Object.keys(REQUEST_KEYS[api].shapes[name].keys).sort();
  assert.deepEqual(keys("openai-chat", "ChatCompletionToolMessageParam"), ["content", "role", "tool_call_id"]);
  assert.deepEqual(keys("openai-responses", "ResponseInputItem.FunctionCallOutput"), ["call_id", "caller", "id", "name", "namespace", "output", "status", "type"]);
  assert.deepEqual(keys("anthropic", "ThinkingBlockParam"), ["signature", "thinking", "type"]);
  assert.ok("messages" in REQUEST_KEYS["openai-chat"].shapes.ChatCompletionCreateParamsBase.keys);
  assert.ok("instructions" in REQUEST_KEYS["openai-responses"].shapes.ResponseCreateParamsBase.keys);
  assert.ok("system" in REQUEST_KEYS.anthropic.shapes.MessageCreateParamsBase.keys);
});

test("counted counts the system text, the messages with tool calls and results, and the tool definitions", () => {
  const body = {
    model: "claude-sonnet-4-5", max_tokens: 100,
    system: [{ type: "text", text: SYSTEM }],
    messages: [
      { role: "user", content: QUESTION },
      { role: "assistant", content: [{ type: "thinking", thinking: "Read it.", signature: "xyz" }, { type: "tool_use", id: "t1", name: "read_log", input: { turn: 1 } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: LOG(1) }] }] },
    ],
    tools: [{ name: "read_log", description: "Reads a log", input_schema: SCHEMA }],
  };
  const c = counted(body, "anthropic");
  assert.equal(c.system, tokens(SYSTEM));
  assert.equal(c.messages, tokens(QUESTION) + tokens("Read it.") + tokens("read_log") + tokens('{"turn":1}') + tokens(LOG(1)));
  assert.equal(c.tools, tokens("read_log") + tokens("Reads a log") + tokens(JSON.stringify(SCHEMA)));
  assert.equal(c.total, c.system + c.messages + c.tools);
  assert.deepEqual(counted({ api: "anthropic", body }), c);
  const responses = counted({ instructions: SYSTEM, input: [{ role: "user", content: QUESTION }, { type: "function_call", call_id: "c", name: "read_log", arguments: "{}" }, { type: "function_call_output", call_id: "c", output: "ok" }] }, "openai-responses");
  assert.deepEqual(responses, { total: tokens(SYSTEM) + tokens(QUESTION) + tokens("read_log") + tokens("{}") + tokens("ok"), system: tokens(SYSTEM), messages: tokens(QUESTION) + tokens("read_log") + tokens("{}") + tokens("ok"), tools: 0 });
  assert.equal(counted({ messages: [{ role: "developer", content: SYSTEM }, { role: "user", content: [{ type: "text", text: QUESTION }] }] }, "openai-chat").system, tokens(SYSTEM));
});

test("the scripted fetch takes a string, a URL or a Request, routes by path and answers unknown routes with 404", async () => {
  const { fetch, requests } = scriptedApi({ reply: { text: "hi", usage: { inputTokens: 3, outputTokens: 1 } } });
  const body = JSON.stringify({ model: "gpt-4.1", messages: [{ role: "user", content: "hello" }] });
  const a = await fetch("https://api.openai.com/v1/chat/completions", { method: "POST", body, headers: { Authorization: "Bearer test" } });
  const b = await fetch(new URL("https://proxy.example/openai/v1/responses?x=1"), { method: "POST", body: JSON.stringify({ model: "gpt-4.1", input: "hello" }) });
  const c = await fetch(new Request("https://api.anthropic.com/v1/messages", { method: "POST", body: JSON.stringify({ model: "claude", max_tokens: 10, messages: [{ role: "user", content: "hello" }] }) }));
  const d = await fetch("https://api.openai.com/v1/embeddings", { method: "POST", body: "{}" });
  assert.deepEqual(requests.map((r) => r.api), ["openai-chat", "openai-responses", "anthropic", null]);
  assert.equal(requests[0].headers.authorization, "Bearer test");
  const chat = await a.json();
  assert.equal(chat.object, "chat.completion");
  assert.equal(chat.choices[0].message.content, "hi");
  assert.equal(chat.choices[0].finish_reason, "stop");
  assert.deepEqual(chat.usage, { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4, prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 } });
  const resp = await b.json();
  assert.equal(resp.object, "response");
  assert.equal(resp.status, "completed");
  assert.equal(resp.output[0].content[0].text, "hi");
  const message = await c.json();
  assert.equal(message.type, "message");
  assert.equal(message.stop_reason, "end_turn");
  assert.deepEqual(message.content, [{ type: "text", text: "hi" }]);
  assert.equal(d.status, 404);
  assert.equal(apiOf("https://api.anthropic.com/v1/messages?beta=true"), "anthropic");
  const raw = scriptedApi({ reply: [{ rawBody: { anything: true }, status: 202 }, { status: 500 }] });
  const e = await raw.fetch("https://api.anthropic.com/v1/messages", { method: "POST", body: "not json" });
  assert.equal(e.status, 202);
  assert.deepEqual(await e.json(), { anything: true });
  assert.equal(raw.requests[0].body, null);
  assert.equal(raw.requests[0].bodyText, "not json");
  const f = await raw.fetch("https://api.anthropic.com/v1/messages", { method: "POST", body: "{}" });
  assert.equal(f.status, 500);
  assert.deepEqual((await f.json()).error.type, "api_error");
});

test("streamed replies are the APIs' event sequences", async () => {
  const reply = { text: "Hello there, world", toolCalls: [{ id: "call_1", name: "f", arguments: { a: 1 } }], usage: { inputTokens: 10, outputTokens: 4 } };
  const { fetch } = scriptedApi({ reply });
  const events = async (url, body) => {
    const res = await fetch(url, { method: "POST", body: JSON.stringify({ ...body, stream: true }) });
    assert.match(res.headers.get("content-type"), /^text\/event-stream/);
    return (await res.text()).trim().split("\n\n").map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)[1];
      return { event, data: data === "[DONE]" ? data : JSON.parse(data) };
    });
  };
  const chat = await events("https://x/v1/chat/completions", { model: "m", messages: [], stream_options: { include_usage: true } });
  assert.equal(chat.at(-1).data, "[DONE]");
  assert.deepEqual(chat.at(-2).data.choices, []);
  assert.equal(chat.at(-2).data.usage.prompt_tokens, 10);
  assert.equal(chat.at(-3).data.choices[0].finish_reason, "tool_calls");
  assert.equal(chat.map((e) => e.data.choices?.[0]?.delta?.content ?? "").join(""), reply.text);
  const responses = await events("https://x/v1/responses", { model: "m", input: "hi" });
  assert.deepEqual([...new Set(responses.map((e) => e.event))], [
    "response.created", "response.in_progress", "response.output_item.added", "response.content_part.added", "response.output_text.delta",
    "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.function_call_arguments.delta",
    "response.function_call_arguments.done", "response.completed",
  ]);
  assert.deepEqual(responses.map((e) => e.data.sequence_number), responses.map((_, i) => i));
  assert.equal(responses.at(-1).data.response.usage.input_tokens, 10);
  const anthropic = await events("https://x/v1/messages", { model: "m", max_tokens: 10, messages: [] });
  assert.deepEqual(anthropic.map((e) => e.event).filter((e, i, all) => e !== all[i - 1]), [
    "message_start", "ping", "content_block_start", "content_block_delta", "content_block_stop",
    "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop",
  ]);
  assert.equal(anthropic.filter((e) => e.data.delta?.type === "input_json_delta").map((e) => e.data.delta.partial_json).join(""), '{"a":1}');
  assert.equal(anthropic.find((e) => e.event === "message_delta").data.delta.stop_reason, "tool_use");
  // The same bodies without a fetch.
  const message = replyBody("anthropic", { reasoning: { text: "hm", signature: "s" }, text: "ok", usage: { inputTokens: 50, cachedInputTokens: 20, outputTokens: 3 } }, { body: { model: "claude-x" } });
  assert.deepEqual(message.content, [{ type: "thinking", thinking: "hm", signature: "s" }, { type: "text", text: "ok" }]);
  assert.deepEqual([message.model, message.stop_reason, message.usage.input_tokens, message.usage.cache_read_input_tokens], ["claude-x", "end_turn", 30, 20]);
  const chunks = replyBody("openai-chat", { text: "ok" }, { body: { model: "m", messages: [] }, stream: true });
  assert.equal(sseText(chunks).at(-1), "data: [DONE]\n\n");
  assert.deepEqual(errorBody("anthropic", 529), { type: "error", error: { type: "overloaded_error", message: "Overloaded" }, request_id: "req_wire1" });
  assert.equal(errorBody("openai-responses", 429).error.code, "rate_limit_exceeded");
});
