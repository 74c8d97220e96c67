// session.recordReply: a loop of the host's own records a model's reply as
// runCompiled does (usage, text, reasoning), gets the calls to run with the
// provider's ids, and the next request pairs them under those ids.
import { test } from "node:test";
import assert from "node:assert/strict";
import { generateText, jsonSchema, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { ContextCompiler, HistorySelector, ToolInterruptHandler, Session, checkRequest } from "agent-context-compiler";

const compiler = () => new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity })] });
const kinds = (session) => session.eventLog.events.map((e) => e.kind);

test("an OpenAI Chat Completion with tool calls: usage and calls recorded, the next request pairs them under the provider's ids", async () => {
  const session = new Session();
  const handler = new ToolInterruptHandler({ session, bridge: async (name, args) => `${name}(${args.path}): 92% used` });
  session.record("user_input", { text: "How full are /data and /var?" });
  const completion = {
    id: "chatcmpl-1", object: "chat.completion", model: "gpt-4.1",
    choices: [{ index: 0, finish_reason: "tool_calls", message: { role: "assistant", content: null, tool_calls: [
      { id: "call_A", type: "function", function: { name: "df", arguments: '{"path":"/data"}' } },
      { id: "call_B", type: "function", function: { name: "df", arguments: '{"path":"/var"}' } },
    ] } }],
    usage: { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150, prompt_tokens_details: { cached_tokens: 64 } },
  };
  const recorded = session.recordReply(completion);
  assert.equal(recorded.text, "");
  assert.deepEqual(recorded.toolCalls.map((c) => [c.id, c.name, c.arguments, c.callOptions]), [
    ["call_A", "df", { path: "/data" }, { callId: "call_A" }],
    ["call_B", "df", { path: "/var" }, { callId: "call_B" }],
  ]);
  assert.deepEqual(recorded.refused, []);
  assert.equal(recorded.usage.inputTokens, 120);
  assert.deepEqual(kinds(session), ["user_input", "model_usage"], "a reply of calls only records no empty answer");
  await Promise.all(recorded.toolCalls.map((c) => handler.call(c.name, c.arguments, c.callOptions)));
  session.recordReply({ choices: [{ message: { role: "assistant", content: "Both are 92% full." } }] });
  session.record("user_input", { text: "Thanks" });
  const ctx = await compiler().compile(session, 4000, { systemPrompt: "You are an SRE." });
  const messages = ctx.toMessages({ format: "openai" });
  const assistant = messages.find((m) => m.tool_calls);
  assert.deepEqual(assistant.tool_calls.map((c) => c.id), ["call_A", "call_B"]);
  assert.deepEqual(messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id), ["call_A", "call_B"]);
  assert.ok(messages.some((m) => m.role === "assistant" && m.content === "Both are 92% full."));
  assert.deepEqual(checkRequest(messages, { format: "openai" }), []);
  ctx.free();
  session.free();
});

test("an Anthropic message's thinking goes with its first call and back first in the assistant turn", async () => {
  const session = new Session();
  const handler = new ToolInterruptHandler({ session, bridge: async () => "ok" });
  session.record("user_input", { text: "Check the job" });
  const message = {
    id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-5", stop_reason: "tool_use",
    content: [
      { type: "thinking", thinking: "I should read the log.", signature: "sig-1" },
      { type: "tool_use", id: "toolu_1", name: "read_log", input: { job: "nightly" } },
    ],
    usage: { input_tokens: 200, output_tokens: 40 },
  };
  const { toolCalls } = session.recordReply(message);
  assert.equal(toolCalls[0].callOptions.callId, "toolu_1");
  assert.equal(toolCalls[0].callOptions.reasoning.format, "anthropic");
  await handler.call(toolCalls[0].name, toolCalls[0].arguments, toolCalls[0].callOptions);
  const ctx = await compiler().compile(session, 4000, { systemPrompt: "You are an SRE." });
  const request = ctx.toMessages({ format: "anthropic" });
  const turn = request.messages.find((m) => m.role === "assistant");
  assert.deepEqual(turn.content.map((b) => b.type), ["thinking", "tool_use"]);
  assert.equal(turn.content[1].id, "toolu_1");
  assert.deepEqual(checkRequest(request, { format: "anthropic" }), []);
  ctx.free();
  session.free();
});

test("an AI SDK generateText result is read through its getters", async () => {
  const session = new Session();
  session.record("user_input", { text: "Hi" });
  const model = new MockLanguageModelV4({
    doGenerate: async () => ({
      content: [{ type: "tool-call", toolCallId: "tc_9", toolName: "df", input: '{"path":"/"}' }],
      finishReason: { unified: "tool-calls", raw: "tool-calls" },
      usage: { inputTokens: { total: 50, noCache: 50, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } },
      warnings: [],
    }),
  });
  const result = await generateText({ model, prompt: "Hi", tools: { df: tool({ inputSchema: jsonSchema({ type: "object" }) }) } });
  const { toolCalls } = session.recordReply(result);
  assert.deepEqual(toolCalls.map((c) => [c.id, c.name, c.arguments]), [["tc_9", "df", { path: "/" }]]);
  assert.equal(session.eventLog.events.at(-1).data.inputTokens, 50);
  session.free();
});

test("unreadable arguments are refused as runCompiled refuses them; a bad reply or a stream records nothing", async () => {
  const session = new Session();
  session.record("user_input", { text: "Go" });
  const { toolCalls, refused } = session.recordReply({ content: "Trying.", tool_calls: [{ id: "call_X", type: "function", function: { name: "df", arguments: "{not json" } }] });
  assert.deepEqual(toolCalls, []);
  assert.equal(refused.length, 1);
  assert.equal(refused[0].kind, "tool_error");
  assert.match(refused[0].error, /not valid JSON/);
  assert.deepEqual(kinds(session), ["user_input", "assistant_output", "tool_call", "tool_error"]);
  const ctx = await compiler().compile(session, 4000, { systemPrompt: "s" });
  const messages = ctx.toMessages({ format: "openai" });
  assert.equal(messages.find((m) => m.role === "tool").tool_call_id, "call_X");
  assert.deepEqual(checkRequest(messages, { format: "openai" }), []);
  ctx.free();
  const before = session.eventLog.events.length;
  async function* stream() { yield { choices: [{ delta: { content: "x" } }] }; }
  for (const bad of [42, null, "", { content: null }, { nothing: true }, stream()]) {
    assert.throws(() => session.recordReply(bad), { code: "INVALID_ARGUMENT" }, String(bad));
  }
  assert.equal(session.eventLog.events.length, before);
  await assert.rejects(new ToolInterruptHandler({ session, bridge: () => "x" }).call("df", {}, { reasoning: { format: "nope", items: [] } }), { code: "INVALID_ARGUMENT" });
  session.free();
});

test("an endpoint that sends call_0 every turn (llama.cpp, Kimi): each call pairs with its own result in every format", async () => {
  const session = new Session();
  const handler = new ToolInterruptHandler({ session, bridge: async (name, args) => `${name}: ${args.path} is ${args.path === "/data" ? "92" : "40"}% used` });
  for (const path of ["/data", "/var"]) {
    session.record("user_input", { text: `How full is ${path}?` });
    const recorded = session.recordReply({ choices: [{ message: { role: "assistant", content: null, tool_calls: [
      { id: "call_0", type: "function", function: { name: "df", arguments: JSON.stringify({ path }) } },
    ] } }] });
    await handler.call(recorded.toolCalls[0].name, recorded.toolCalls[0].arguments, recorded.toolCalls[0].callOptions);
    session.recordReply({ choices: [{ message: { role: "assistant", content: `Checked ${path}.` } }] });
  }
  const ctx = await compiler().compile(session, 4000, { systemPrompt: "You are an SRE." });
  const messages = ctx.toMessages({ format: "openai" });
  const pairs = messages.flatMap((m, i) => (m.tool_calls ?? []).map((c) => [c.id, JSON.parse(c.function.arguments).path, messages.slice(i + 1).find((r) => r.role === "tool" && r.tool_call_id === c.id)?.content]));
  assert.equal(pairs.length, 2);
  assert.match(pairs[0][2], /\/data is 92%/);
  assert.match(pairs[1][2], /\/var is 40%/);
  assert.equal(pairs[0][0], "call_0", "the first call keeps the provider's id");
  assert.notEqual(pairs[1][0], "call_0");
  for (const format of ["openai", "openai-responses", "anthropic", "gemini", "ai-sdk"]) {
    assert.deepEqual(checkRequest(ctx.toMessages({ format }), { format }), [], format);
  }
  ctx.free();
  session.free();
});
