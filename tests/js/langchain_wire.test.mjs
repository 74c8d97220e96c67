// agent-context-compiler/langchain through LangChain's own provider code
// (ChatOpenAI on Chat Completions, ChatAnthropic with thinking) over a
// scripted fetch that plays the API: every HTTP body is within budget
// (o200k), holds the turn's question, pairs every call, passes
// checkRequest and has no field outside the provider's request type; the
// model reads what it asked for, with the middleware's look-back tools for
// what does not fit; thinking goes back signed, first in its turn, and is
// recorded as reasoning, never as the model's text; a tool's Command is
// redacted before the checkpointer or the caller sees it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createAgent, tool } from "langchain";
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { Command, MemorySaver } from "@langchain/langgraph";
import { ChatOpenAI } from "@langchain/openai";
import { ChatAnthropic } from "@langchain/anthropic";
import { compileMetadata, contextMiddleware } from "agent-context-compiler/langchain";
import { MemoryArtifactStore, Session, checkRequest } from "agent-context-compiler";
import { extraFields, scriptedApi } from "./wire/index.mjs";
import { parentName, tracedSpans } from "./traced.mjs";
import { BUDGET, SECRET, SYSTEM, TOOL_SPECS, TURNS, assertReadsWhatItAskedFor, codingModel, recommended, runTool, turnPlan } from "./coding_loop.mjs";

/** The app's tools, run by LangChain. */
const appTools = TOOL_SPECS.map((s) => tool(async (args) => runTool(s.name, args), { name: s.name, description: s.description, schema: s.parameters }));

const chatOpenAI = (fetch) => new ChatOpenAI({ model: "gpt-4.1", apiKey: "test", maxRetries: 0, configuration: { fetch } });
const chatAnthropic = (fetch) => new ChatAnthropic({ model: "claude-sonnet-4-5", apiKey: "test", maxRetries: 0, maxTokens: 4096, thinking: { type: "enabled", budget_tokens: 1024 }, clientOptions: { fetch } });

/** Runs the 30-turn coding loop through `chatModel` (a function of the scripted fetch). */
async function codingLoop(chatModel, { format, reasoning }) {
  const { session, store, compiler } = await recommended(`langchain-${format}`);
  const { reply, measured } = codingModel({ idPrefix: format === "anthropic" ? "toolu_" : "call_", reasoning });
  const api = scriptedApi({ reply });
  const agent = createAgent({
    model: chatModel(api.fetch), tools: appTools, systemPrompt: SYSTEM, checkpointer: new MemorySaver(),
    middleware: [contextMiddleware({ session, compiler, budget: BUDGET, artifactStore: store })],
  });
  const config = { configurable: { thread_id: "coding" }, recursionLimit: 100 };
  const replies = [];
  for (let t = 1; t <= TURNS; t++) {
    const result = await agent.invoke({ messages: [new HumanMessage(turnPlan(t).question)] }, config);
    const last = result.messages.at(-1);
    assert.match(String(typeof last.content === "string" ? last.content : last.content.map((b) => b.text ?? "").join("")), new RegExp(`Turn ${t}: `));
    replies.push(last);
  }
  return { session, api, measured, replies, state: await agent.getState(config) };
}

for (const [name, chatModel, format, reasoning] of [
  ["ChatOpenAI (Chat Completions)", chatOpenAI, "openai", false],
  ["ChatAnthropic with thinking", chatAnthropic, "anthropic", true],
]) {
  test(`a 30-turn createAgent coding loop through ${name}: every body within budget, paired, checked, no stray field; the model reads what it asked for`, async () => {
    const { session, api, measured, replies, state } = await codingLoop(chatModel, { format, reasoning });
    try {
      const api_ = format === "anthropic" ? "anthropic" : "openai-chat";
      assert.ok(api.requests.every((r) => r.api === api_), "the provider's own API");
      const request = (r) => (format === "anthropic" ? r.body : r.body.messages);
      assertReadsWhatItAskedFor(api.requests, measured, (r) => [...extraFields(r), ...checkRequest(request(r), { format })]);
      // The look-back tools were offered by the middleware.
      const offered = (r) => (r.body.tools ?? []).map((t) => t.name ?? t.function?.name);
      assert.ok(api.requests.every((r) => offered(r).includes("read_artifact") && offered(r).includes("search_history")));
      // Each reply carries its compile's metadata.
      assert.ok(replies.every((m) => compileMetadata(m)?.ledger.included.length > 0));
      // Every step recorded once; the model's text is its text.
      const events = session.eventLog.events;
      const calls = events.filter((e) => e.kind === "tool_call");
      assert.equal(calls.length, api.requests.length - TURNS);
      assert.deepEqual(events.filter((e) => ["tool_success", "tool_error"].includes(e.kind)).map((e) => e.data.call_id), calls.map((e) => e.data.call_id));
      assert.equal(events.filter((e) => e.kind === "user_input").length, TURNS);
      assert.ok(events.filter((e) => e.kind === "assistant_output").every((e) => /^Turn \d+: /.test(e.data.text)), "no [thinking] or [tool_use] placeholder recorded as text");
      if (reasoning) {
        // Each call's thinking is recorded with it, and sent back signed, first in its turn.
        assert.ok(calls.filter((e) => e.data.reasoning?.items?.[0]?.type === "thinking").length >= TURNS);
        const withCalls = api.requests.filter((r) => r.body.messages.at(-2)?.content?.some?.((b) => b.type === "tool_use"));
        assert.ok(withCalls.length > TURNS);
        for (const r of withCalls) {
          const turn = r.body.messages.at(-2);
          assert.equal(turn.content[0].type, "thinking", "the current turn's thinking first");
          assert.ok(turn.content[0].signature);
        }
      }
      assert.ok(!session.exportJson().includes(SECRET));
      assert.ok(!JSON.stringify(state.values.messages).includes(SECRET), "the checkpointer holds no secret");
    } finally {
      session.free();
    }
  });
}

test("a tool returning a Command is redacted in the checkpoint and in what invoke returns", async () => {
  const { session, compiler } = await recommended("command");
  const leaky = tool(async (_args, config) => new Command({ update: { messages: [new ToolMessage({ content: `deployed with AWS_SECRET_ACCESS_KEY=${SECRET}`, tool_call_id: config.toolCall.id, name: "deploy" })], deployed: true } }), {
    name: "deploy", description: "Deploys", schema: { type: "object", properties: {} },
  });
  const api = scriptedApi({ reply: (r) => (r.body.messages.some((m) => m.role === "tool") ? { text: "Deployed." } : { toolCalls: [{ id: "call_1", name: "deploy", arguments: {} }] }) });
  const checkpointer = new MemorySaver();
  const agent = createAgent({ model: chatOpenAI(api.fetch), tools: [leaky], checkpointer, middleware: [contextMiddleware({ session, compiler, budget: BUDGET, lookBackTools: false })] });
  const config = { configurable: { thread_id: "deploy" } };
  const result = await agent.invoke({ messages: [new HumanMessage("Deploy it")] }, config);
  assert.equal(result.messages.at(-1).content, "Deployed.");
  assert.ok(!JSON.stringify(result.messages).includes(SECRET), "not in what invoke returns");
  const state = await agent.getState(config);
  assert.ok(!JSON.stringify(state.values).includes(SECRET), "not in the checkpoint");
  assert.ok(state.values.messages.some((m) => m.getType() === "tool" && /REDACTED/.test(m.content)));
  assert.ok(api.requests.every((r) => !r.bodyText.includes(SECRET)), "not sent");
  assert.equal(session.eventLog.events.filter((e) => e.kind === "tool_success").length, 1);
  session.free();
});

test("a thread the resolver does not know is loaded from the store, else INVALID_ARGUMENT naming it", async () => {
  const { compiler } = await recommended("lc-threads");
  const store = new MemoryArtifactStore();
  const saved = new Session({ sessionId: "saved" });
  saved.record("user_input", { text: "Turn 0: the build uses pnpm." });
  await saved.sync(store);
  const api = scriptedApi({ reply: { text: "Turn 1: ok." } });
  const resolved = [];
  const agent = createAgent({
    model: chatOpenAI(api.fetch), tools: [], checkpointer: new MemorySaver(),
    middleware: [contextMiddleware({ session: (id) => (resolved.push(id), undefined), compiler, budget: BUDGET, store })],
  });
  await agent.invoke({ messages: [new HumanMessage("Turn 1: which package manager?")] }, { configurable: { thread_id: "saved" } });
  assert.deepEqual(resolved, ["saved"], "once per model call");
  assert.ok(api.requests[0].bodyText.includes("the build uses pnpm"), "the saved thread reached the model");
  const synced = await store.loadSession("saved");
  assert.deepEqual(synced.eventLog.events.map((e) => e.kind).filter((k) => k !== "model_usage"), ["user_input", "user_input", "assistant_output"]);
  // (LangChain wraps what a middleware throws; the coded error is its cause.)
  await assert.rejects(agent.invoke({ messages: [new HumanMessage("hi")] }, { configurable: { thread_id: "nobody" } }), (e) => (e.code ?? e.cause?.code) === "INVALID_ARGUMENT" && /thread "nobody"/.test(e.message));
  for (const s of [saved, synced]) s.free();
});

test("the look-back tools can be left out; options are checked", async () => {
  const { session, compiler } = await recommended("lc-options");
  assert.throws(() => contextMiddleware({ session, compiler, budget: 1, artifactstore: {} }), { code: "INVALID_ARGUMENT", message: /did you mean artifactStore/ });
  assert.throws(() => contextMiddleware({ session, compiler, budget: 1, lookBackTools: "yes" }), { code: "INVALID_ARGUMENT" });
  assert.throws(() => contextMiddleware({ session, compiler, budget: 1, artifactStore: {} }), { code: "INVALID_ARGUMENT" });
  assert.deepEqual(contextMiddleware({ session, compiler, budget: 1, lookBackTools: false }).tools, []);
  assert.deepEqual(contextMiddleware({ session, compiler, budget: 1 }).tools.map((t) => t.name), ["search_history", "read_artifact"]);
  session.free();
});

test("a tracer on the middleware traces each compile under the app's active span", async () => {
  const { session, compiler } = await recommended("lc-traced");
  const spans = await tracedSpans(async (tracer) => {
    const api = scriptedApi({ reply: { text: "Hi." } });
    const agent = createAgent({ model: chatOpenAI(api.fetch), tools: [], middleware: [contextMiddleware({ session, compiler, budget: BUDGET, tracer })] });
    await tracer.startActiveSpan("handle request", async (span) => {
      await agent.invoke({ messages: [new HumanMessage("hi")] });
      span.end();
    });
  });
  assert.equal(parentName(spans, "compile_context"), "handle request");
  session.free();
});

test("a Command's tool message given as a plain object is redacted too; a call id used again is a new call", async () => {
  const { session, compiler } = await recommended("lc-plain-command");
  const plain = tool(async (_args, config) => new Command({ update: { messages: [{ role: "tool", content: `key AWS_SECRET_ACCESS_KEY=${SECRET}`, tool_call_id: config.toolCall.id }] } }), {
    name: "env", description: "Prints the environment", schema: { type: "object", properties: {} },
  });
  // The provider calls every call call_0.
  const api = scriptedApi({ reply: (r) => (r.body.messages.at(-1).role === "tool" ? { text: "Done." } : { toolCalls: [{ id: "call_0", name: "env", arguments: {} }] }) });
  const checkpointer = new MemorySaver();
  const agent = createAgent({ model: chatOpenAI(api.fetch), tools: [plain], checkpointer, middleware: [contextMiddleware({ session, compiler, budget: BUDGET, lookBackTools: false })] });
  const config = { configurable: { thread_id: "env" } };
  for (const q of ["Show the environment", "Show it again"]) {
    const result = await agent.invoke({ messages: [new HumanMessage(q)] }, config);
    assert.ok(!JSON.stringify(result.messages).includes(SECRET), "not in what invoke returns");
  }
  assert.ok(!JSON.stringify((await agent.getState(config)).values).includes(SECRET), "not in the checkpoint");
  const kinds = session.eventLog.events.map((e) => e.kind).filter((k) => k !== "model_usage");
  assert.deepEqual(kinds, ["user_input", "tool_call", "tool_success", "assistant_output", "user_input", "tool_call", "tool_success", "assistant_output"]);
  assert.ok(api.requests.every((r) => !r.bodyText.includes(SECRET)));
  session.free();
});

test("a look-back call the session cannot answer, and a tool that throws, are the model's tool errors, not the run's end", async () => {
  const { session, compiler, store } = await recommended("lc-errors");
  const broken = tool(async () => {
    throw new Error("ENOENT: no such file");
  }, { name: "read_file", description: "Reads a file", schema: { type: "object", properties: {} } });
  const api = scriptedApi({
    reply: (r) => {
      const results = r.body.messages.filter((m) => m.role === "tool");
      if (results.length === 0) return { toolCalls: [{ id: "call_1", name: "read_artifact", arguments: { handle: "made-up" } }, { id: "call_2", name: "read_file", arguments: {} }] };
      return { text: `Saw: ${results.map((m) => m.content).join(" | ")}` };
    },
  });
  const agent = createAgent({ model: chatOpenAI(api.fetch), tools: [broken], checkpointer: new MemorySaver(), middleware: [contextMiddleware({ session, compiler, budget: BUDGET, artifactStore: store })] });
  const result = await agent.invoke({ messages: [new HumanMessage("Read it")] }, { configurable: { thread_id: "errors" } });
  const text = result.messages.at(-1).content;
  assert.match(text, /no stored output has the handle 'made-up'/);
  assert.match(text, /ENOENT: no such file/);
  const outcomes = session.eventLog.events.filter((e) => ["tool_success", "tool_error"].includes(e.kind)).map((e) => [e.kind, e.data.call_id]);
  assert.deepEqual(outcomes.toSorted(), [["tool_error", "call_1"], ["tool_error", "call_2"]]);
  session.free();
});
