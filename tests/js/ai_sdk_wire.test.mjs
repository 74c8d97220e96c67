// agent-context-compiler/ai-sdk through the AI SDK's own provider code
// (@ai-sdk/openai's Responses model, @ai-sdk/anthropic) over a scripted
// fetch that plays the API: every HTTP body the provider would get is within
// budget (o200k), holds the turn's question, pairs every call, passes
// checkRequest and has no field outside the provider's request type; the
// model reads what it asked for (whole while it fits, in pages when it does
// not); a retried call, a malformed call and a thread resolver record
// nothing twice and lose nothing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { generateText, isStepCount, jsonSchema, streamText, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { createOpenAI } from "@ai-sdk/openai";
import { createAnthropic } from "@ai-sdk/anthropic";
import { OpenTelemetry } from "@ai-sdk/otel";
import { compileMetadata, contextMiddleware, lookBackTools } from "agent-context-compiler/ai-sdk";
import { MemoryArtifactStore, Session, checkRequest } from "agent-context-compiler";
import { extraFields, scriptedApi } from "./wire/index.mjs";
import { parentName, tracedSpans } from "./traced.mjs";
import { BUDGET, SECRET, SYSTEM, TOOL_SPECS, TURNS, assertReadsWhatItAskedFor, codingModel, recommended, runTool, turnPlan } from "./coding_loop.mjs";

/** The app's tools, run by the SDK. */
const appTools = Object.fromEntries(TOOL_SPECS.map((s) => [s.name, tool({ description: s.description, inputSchema: jsonSchema(s.parameters), execute: async (args) => runTool(s.name, args) })]));

/** Runs the 30-turn coding loop through `provider` (a function of the scripted fetch giving a language model). */
async function codingLoop(provider, { stream = false, format }) {
  const { session, store, compiler } = await recommended(`ai-sdk-${format}`);
  const { reply, measured } = codingModel({ idPrefix: format === "anthropic" ? "toolu_" : "call_" });
  const api = scriptedApi({ reply });
  const model = wrapLanguageModel({ model: provider(api.fetch), middleware: contextMiddleware({ session, compiler, budget: BUDGET, systemPrompt: SYSTEM }) });
  const tools = { ...appTools, ...lookBackTools({ session, artifactStore: store }) };
  const messages = [];
  const compiles = [];
  for (let t = 1; t <= TURNS; t++) {
    messages.push({ role: "user", content: turnPlan(t).question });
    const call = { model, messages, tools, stopWhen: isStepCount(12), maxRetries: 0 };
    const result = stream ? streamText(call) : await generateText(call);
    assert.match(await result.text, new RegExp(`^Turn ${t}: `));
    messages.push(...(await result.responseMessages));
    for (const step of await result.steps) compiles.push(compileMetadata(step));
  }
  return { session, api, measured, compiles };
}

for (const [name, provider, format, stream] of [
  ["@ai-sdk/openai (Responses), generateText", (fetch) => createOpenAI({ apiKey: "test", fetch })("gpt-4.1"), "openai-responses", false],
  ["@ai-sdk/anthropic, streamText", (fetch) => createAnthropic({ apiKey: "test", fetch })("claude-sonnet-4-5"), "anthropic", true],
]) {
  test(`a 30-turn coding loop through ${name}: every body within budget, paired, checked, no stray field; the model reads what it asked for`, async () => {
    const { session, api, measured, compiles } = await codingLoop(provider, { stream, format });
    try {
      assert.ok(api.requests.length > 60, `${api.requests.length} requests`);
      assert.ok(api.requests.every((r) => r.api === format), "the provider's own API");
      assertReadsWhatItAskedFor(api.requests, measured, (r) => [...extraFields(r), ...checkRequest(r.body, { format })]);
      // Each step's result carries its compile's ledger and cache report.
      assert.equal(compiles.length, api.requests.length);
      assert.ok(compiles.every((c) => c.ledger.included.length > 0 && c.cache));
      // Every step recorded once: a call per call id and turn, an outcome per call.
      const events = session.eventLog.events;
      const calls = events.filter((e) => e.kind === "tool_call");
      const outcomes = events.filter((e) => ["tool_success", "tool_error"].includes(e.kind));
      assert.equal(calls.length, api.requests.length - TURNS);
      assert.deepEqual(outcomes.map((e) => e.data.call_id), calls.map((e) => e.data.call_id));
      assert.equal(events.filter((e) => e.kind === "user_input").length, TURNS);
      assert.ok(!session.exportJson().includes(SECRET));
    } finally {
      session.free();
    }
  });
}

test("a call the SDK retries (429, 529) sends and records the question once", async () => {
  const { session, compiler } = await recommended("retry");
  const replies = [{ status: 429, retryAfterMs: 1 }, { status: 529, retryAfterMs: 1 }, { toolCalls: [{ id: "call_1", name: "read_file", arguments: { path: "src/module_3.rs" } }] }, { status: 500, retryAfterMs: 1 }, { text: "Done." }];
  const api = scriptedApi({ reply: replies });
  const model = wrapLanguageModel({ model: createOpenAI({ apiKey: "test", fetch: api.fetch })("gpt-4.1"), middleware: contextMiddleware({ session, compiler, budget: BUDGET }) });
  const result = await generateText({ model, prompt: "Turn 1: read src/module_3.rs", tools: appTools, stopWhen: isStepCount(3), maxRetries: 3 });
  assert.equal(result.text, "Done.");
  assert.equal(api.requests.length, 5);
  for (const r of api.requests) {
    const questions = r.body.input.filter((i) => i.role === "user" && JSON.stringify(i.content).includes("Turn 1: read"));
    assert.equal(questions.length, 1, "the question once in every body");
  }
  const kinds = session.eventLog.events.map((e) => e.kind);
  assert.deepEqual(kinds.filter((k) => k !== "model_usage" && k !== "artifact_stored"), ["user_input", "tool_call", "tool_success", "assistant_output"]);
  session.free();
});

test("a call whose arguments are not JSON gets one outcome; a call id used again is a new call with its own outcome", async () => {
  const { session, compiler } = await recommended("malformed");
  const api = scriptedApi({
    reply: [
      { toolCalls: [{ id: "call_1", name: "read_file", arguments: "{\"path\": \"src/mod" }] },
      { toolCalls: [{ id: "call_2", name: "read_file", arguments: { path: "src/module_3.rs" } }] },
      { text: "Read it." },
      { toolCalls: [{ id: "call_2", name: "read_file", arguments: { path: "src/module_6.rs" } }] },
      { text: "Read that too." },
    ],
  });
  const model = wrapLanguageModel({ model: createOpenAI({ apiKey: "test", fetch: api.fetch }).chat("gpt-4.1"), middleware: contextMiddleware({ session, compiler, budget: BUDGET }) });
  const first = await generateText({ model, prompt: "Turn 1: read src/module_3.rs", tools: appTools, stopWhen: isStepCount(4) });
  assert.equal(first.text, "Read it.");
  // The request after the refusal pairs the call with its one refusal.
  const afterRefusal = api.requests[1].body.messages.filter((m) => m.role === "tool");
  assert.equal(afterRefusal.length, 1);
  assert.match(afterRefusal[0].content, /not valid JSON/);
  const messages = [{ role: "user", content: "Turn 1: read src/module_3.rs" }, ...first.response.messages, { role: "user", content: "Turn 2: and src/module_6.rs" }];
  const second = await generateText({ model, messages, tools: appTools, stopWhen: isStepCount(3) });
  assert.equal(second.text, "Read that too.");
  const outcomes = session.eventLog.events.filter((e) => ["tool_success", "tool_error"].includes(e.kind));
  assert.deepEqual(outcomes.map((e) => [e.kind, e.data.call_id]), [["tool_error", "call_1"], ["tool_success", "call_2"], ["tool_success", "call_2"]]);
  // (How a request renders a call id used twice is the core's pairing rule,
  // issue 62; here the first turn's requests.)
  for (const r of api.requests.slice(0, 3)) assert.deepEqual(checkRequest(r.body.messages, { format: "openai" }), []);
  session.free();
});

test("a thread's session is resolved once per model call, and the one resolved is synced; an unknown thread is INVALID_ARGUMENT", async () => {
  const { compiler } = await recommended("threads");
  const store = new MemoryArtifactStore();
  const resolved = [];
  // storage.md's pattern: load the thread from the store, new when it has none.
  const resolver = async (id) => {
    const s = (await store.loadSession(id)) ?? (id.startsWith("new-") ? new Session({ sessionId: id }) : null);
    resolved.push(s);
    return s;
  };
  const api = scriptedApi({ reply: (r) => (r.body.input.some((i) => i.type === "function_call_output") ? { text: "Done." } : { toolCalls: [{ id: `call_${r.index}`, name: "read_file", arguments: { path: "src/module_3.rs" } }] }) });
  const model = wrapLanguageModel({ model: createOpenAI({ apiKey: "test", fetch: api.fetch })("gpt-4.1"), middleware: contextMiddleware({ session: resolver, compiler, budget: BUDGET, store }) });
  const ask = (id, prompt) => generateText({ model, prompt, tools: appTools, stopWhen: isStepCount(3), providerOptions: { agentContextCompiler: { sessionId: id } } });
  await ask("new-t1", "Turn 1: read src/module_3.rs");
  assert.equal(resolved.length, 2, "one resolution per model call");
  const saved = await store.loadSession("new-t1");
  assert.deepEqual(saved.eventLog.events.map((e) => e.kind).filter((k) => k !== "model_usage" && k !== "artifact_stored"), ["user_input", "tool_call", "tool_success", "assistant_output"]);
  saved.free();
  // A resolver that gives nothing: the session saved under the id.
  const fallback = wrapLanguageModel({ model: createOpenAI({ apiKey: "test", fetch: api.fetch })("gpt-4.1"), middleware: contextMiddleware({ session: () => undefined, compiler, budget: BUDGET, store }) });
  await generateText({ model: fallback, prompt: "Turn 2: read it again", tools: appTools, stopWhen: isStepCount(3), providerOptions: { agentContextCompiler: { sessionId: "new-t1" } } });
  const again = await store.loadSession("new-t1");
  assert.equal(again.eventLog.events.filter((e) => e.kind === "user_input").length, 2);
  again.free();
  await assert.rejects(ask("unknown", "Turn 1: hi"), { code: "INVALID_ARGUMENT", message: /thread "unknown".*no session saved/ });
  const storeless = wrapLanguageModel({ model: createOpenAI({ apiKey: "test", fetch: api.fetch })("gpt-4.1"), middleware: contextMiddleware({ session: () => null, compiler, budget: BUDGET }) });
  await assert.rejects(generateText({ model: storeless, prompt: "hi", providerOptions: { agentContextCompiler: { sessionId: "t9" } } }), { code: "INVALID_ARGUMENT", message: /thread "t9".*no store/ });
  for (const s of resolved) s?.free();
});

test("usage with an undefined count (as the SDK's type allows) is recorded without it", async () => {
  const { session, compiler } = await recommended("usage");
  const model = new MockLanguageModelV4({
    doGenerate: async () => ({
      content: [{ type: "text", text: "Hello." }],
      finishReason: { unified: "stop", raw: "stop" },
      usage: { inputTokens: { total: 120, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: undefined, text: undefined, reasoning: undefined } },
      warnings: [],
    }),
  });
  const wrapped = wrapLanguageModel({ model, middleware: contextMiddleware({ session, compiler, budget: BUDGET }) });
  const result = await generateText({ model: wrapped, prompt: "hi" });
  assert.equal(result.text, "Hello.");
  const usage = session.eventLog.events.find((e) => e.kind === "model_usage").data;
  assert.equal(usage.inputTokens, 120);
  assert.equal(usage.outputTokens, 0);
  session.free();
});

test("lookBackTools checks its options; a bad handle reaches the model as a tool error", async () => {
  const session = new Session();
  assert.throws(() => lookBackTools({ session, artifactstore: {} }), { code: "INVALID_ARGUMENT", message: /did you mean artifactStore/ });
  assert.throws(() => lookBackTools({ session: {} }), { code: "INVALID_ARGUMENT" });
  const tools = lookBackTools({ session, artifactStore: new MemoryArtifactStore() });
  assert.deepEqual(Object.keys(tools), ["search_history", "read_artifact"]);
  await assert.rejects(tools.read_artifact.execute({ handle: "0".repeat(64) }, { toolCallId: "x", messages: [] }), { code: "INVALID_ARGUMENT", message: /no stored output/ });
  session.free();
});

test("a tracer on the middleware traces each compile under the AI SDK's active span", async () => {
  const { session, compiler } = await recommended("traced");
  const spans = await tracedSpans(async (tracer) => {
    const api = scriptedApi({ reply: { text: "Hi." } });
    const model = wrapLanguageModel({ model: createOpenAI({ apiKey: "test", fetch: api.fetch })("gpt-4.1"), middleware: contextMiddleware({ session, compiler, budget: BUDGET, tracer }) });
    await generateText({ model, prompt: "hi", experimental_telemetry: { isEnabled: true, integrations: new OpenTelemetry({ tracer }) } });
  });
  assert.equal(parentName(spans, "compile_context"), "chat gpt-4.1", "the compile is a child of the SDK's model call span");
  session.free();
});

test("the same message sent again after a reply is recorded again (only a retry is not)", async () => {
  const { session, compiler } = await recommended("same-twice");
  const api = scriptedApi({ reply: { text: "Ok." } });
  const model = wrapLanguageModel({ model: createOpenAI({ apiKey: "test", fetch: api.fetch })("gpt-4.1"), middleware: contextMiddleware({ session, compiler, budget: BUDGET }) });
  for (const prompt of ["Write the next chapter.", "continue", "continue"]) await generateText({ model, prompt });
  assert.deepEqual(session.eventLog.events.filter((e) => e.kind === "user_input").map((e) => e.data.text), ["Write the next chapter.", "continue", "continue"]);
  const last = api.requests.at(-1).body.input;
  assert.equal(last.at(-1).role, "user", "the request ends with the question");
  session.free();
});
