// OpenTelemetry (issue 51): runCompiled({ tracer }) and
// new ContextCompiler({ tracer }) traced through the real SDK
// (@opentelemetry/sdk-trace-base's in-memory exporter): span names, kinds,
// parentage, GenAI attributes, no text by default and redacted text when
// asked, failures, and a throwing tracer that changes nothing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { context, trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { ContextCompiler, HistorySelector, Session, runCompiled } from "agent-context-compiler";
import { rejectsWithCode } from "./helpers.mjs";

const SECRET = "ghp_0123456789abcdef0123456789ABCDEFabcd";

function otel() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { tracer: provider.getTracer("tests"), spans: () => exporter.getFinishedSpans() };
}

/** Asks for a lookup and a failing tool on the first call, then answers. */
function model(messages, { step }) {
  if (step === 0) {
    return {
      content: "Checking.",
      toolCalls: [
        { id: "call_1", name: "lookup", arguments: { q: "config", token: SECRET } },
        { id: "call_2", name: "fail", arguments: {} },
      ],
      usage: { inputTokens: 120, outputTokens: 9, cachedInputTokens: 100 },
    };
  }
  return { content: "Done.", usage: { inputTokens: 150, outputTokens: 3 } };
}

const bridge = (name) => {
  if (name === "lookup") return `found it; token=${SECRET} in the config`;
  throw new Error("disk full");
};
const tools = [{ name: "lookup" }, { name: "fail" }];
const run = (options) =>
  runCompiled(`Find the config, my key is ${SECRET}`, {
    budget: 4000, model, bridge, tools, modelName: "gpt-4.1", lookBackTools: false, ...options,
  });

const id = (span) => span.spanContext().spanId;
const parentId = (span) => (span.parentSpanContext ?? span.parentSpanId)?.spanId ?? span.parentSpanId;
const texts = (spans) => spans.flatMap((s) => Object.values(s.attributes).filter((v) => typeof v === "string")).join("\n");

test("a traced run: a turn span with compiles, model calls and tool calls under it, GenAI attributes, no text", async () => {
  const { tracer, spans } = otel();
  const result = await run({ tracer });
  const all = spans();
  // Spans are exported as they end: children before their turn.
  const byName = (name) => all.filter((s) => s.name === name);
  assert.deepEqual(all.map((s) => s.name).sort(), [
    "chat gpt-4.1", "chat gpt-4.1", "compile_context", "compile_context",
    "execute_tool fail", "execute_tool lookup", "invoke_agent",
  ]);
  const [turn] = byName("invoke_agent");
  assert.equal(parentId(turn), undefined, "the turn is a root here");
  for (const span of all.filter((s) => s !== turn)) {
    assert.equal(parentId(span), id(turn), `${span.name} is under the turn`);
    assert.equal(span.spanContext().traceId, turn.spanContext().traceId);
  }
  assert.equal(turn.kind, 0); // INTERNAL
  assert.equal(byName("chat gpt-4.1")[0].kind, 2); // CLIENT
  assert.equal(turn.attributes["gen_ai.operation.name"], "invoke_agent");
  assert.equal(turn.attributes["gen_ai.conversation.id"], result.sessionId);
  assert.equal(turn.attributes["gen_ai.request.model"], "gpt-4.1");
  assert.equal(turn.attributes["gen_ai.usage.input_tokens"], 270);
  assert.equal(turn.attributes["gen_ai.usage.output_tokens"], 12);
  assert.equal(turn.attributes["agent_context_compiler.steps"], 2);
  assert.equal(turn.attributes["agent_context_compiler.stop_reason"], "answered");

  // In start order (OpenTelemetry's HrTime: seconds, nanoseconds).
  const [first, second] = byName("compile_context").sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
  const step = result.steps[0];
  assert.equal(first.attributes["agent_context_compiler.budget"], 4000);
  assert.equal(first.attributes["agent_context_compiler.tokens"], step.budgetUsed);
  const zones = ["system", "persistent", "working", "recent"].map((z) => first.attributes[`agent_context_compiler.zone.${z}`]);
  assert.equal(zones.reduce((a, b) => a + b, 0), step.budgetUsed);
  assert.equal(first.attributes["agent_context_compiler.compaction_level"], step.compactionLevel);
  assert.equal(first.attributes["agent_context_compiler.cache.miss_cause"], "first");
  assert.equal(second.attributes["agent_context_compiler.cache.prefix_tokens"], result.steps[1].cache.prefixTokens);

  const chat = byName("chat gpt-4.1").find((s) => s.attributes["agent_context_compiler.step"] === 0);
  assert.equal(chat.attributes["gen_ai.operation.name"], "chat");
  assert.equal(chat.attributes["gen_ai.usage.input_tokens"], 120);
  assert.equal(chat.attributes["gen_ai.usage.cache_read.input_tokens"], 100);
  assert.equal(chat.attributes["agent_context_compiler.tool_calls"], 2);

  const [lookup] = byName("execute_tool lookup");
  assert.equal(lookup.attributes["gen_ai.operation.name"], "execute_tool");
  assert.equal(lookup.attributes["gen_ai.tool.name"], "lookup");
  assert.equal(lookup.attributes["gen_ai.tool.call.id"], "call_1");
  assert.equal(lookup.status.code, 0);
  const [failed] = byName("execute_tool fail");
  assert.equal(failed.status.code, 2, "a failed tool call is an error span");
  assert.equal(failed.attributes["error.type"], "tool_error");
  assert.equal(failed.attributes["gen_ai.tool.call.id"], "call_2");

  const text = texts(all);
  for (const key of ["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"]) {
    assert.ok(all.every((s) => !(key in s.attributes)), `no ${key} by default`);
  }
  assert.ok(!text.includes("Find the config") && !text.includes("found it"), "no message text by default");
});

test("traceContent puts the messages, the reply and the tool's arguments and result on the spans, redacted", async () => {
  const { tracer, spans } = otel();
  await run({ tracer, traceContent: true });
  const all = spans();
  const chat = all.find((s) => s.name === "chat gpt-4.1" && s.attributes["agent_context_compiler.step"] === 0);
  const sent = JSON.parse(chat.attributes["gen_ai.input.messages"]);
  assert.ok(sent.some((m) => m.role === "user" && m.parts[0].content.includes("Find the config")));
  assert.equal(sent[0].role, "system");
  const reply = JSON.parse(chat.attributes["gen_ai.output.messages"]);
  assert.equal(reply[0].role, "assistant");
  assert.deepEqual(reply[0].parts.map((p) => p.type), ["text", "tool_call", "tool_call"]);
  const lookup = all.find((s) => s.name === "execute_tool lookup");
  assert.match(lookup.attributes["gen_ai.tool.call.arguments"], /config/);
  assert.match(lookup.attributes["gen_ai.tool.call.result"], /found it/);
  const text = texts(all);
  assert.ok(!text.includes(SECRET), "no secret reaches a span");
  assert.match(text, /\[REDACTED/);
});

test("the turn is a child of the caller's active span when given as the tracer's context", async () => {
  const { tracer, spans } = otel();
  const outer = tracer.startSpan("handle request");
  // Without a context manager the API's active context is the root; a
  // tracer wrapper that starts root spans in the caller's context is what
  // a host with one (AsyncLocalStorage) gets for free.
  const inCaller = {
    startSpan: (name, options, ctx) => tracer.startSpan(name, options, ctx ?? trace.setSpan(context.active(), outer)),
  };
  await run({ tracer: inCaller });
  outer.end();
  const all = spans();
  const turn = all.find((s) => s.name === "invoke_agent");
  assert.equal(parentId(turn), id(outer));
  assert.ok(all.filter((s) => s !== turn && s !== outer).every((s) => parentId(s) === id(turn)));
});

test("a failed model call ends its span and the turn's as errors with the code, its text redacted", async () => {
  const { tracer, spans } = otel();
  await rejectsWithCode(
    () => runCompiled("hi", { budget: 4000, tracer, model: () => { throw new Error(`the provider is down; request had Authorization: token ${SECRET}`); } }),
    "MODEL_FAILED",
  );
  const all = spans();
  assert.deepEqual(all.map((s) => s.name).sort(), ["chat", "compile_context", "invoke_agent"]);
  for (const span of all.filter((s) => s.name !== "compile_context")) {
    assert.equal(span.status.code, 2);
    assert.equal(span.attributes["error.type"], "MODEL_FAILED");
    assert.match(span.status.message, /the provider is down/);
    // The error's text is redacted on the span, without traceContent too.
    assert.ok(!span.status.message.includes(SECRET), span.status.message);
  }
});

test("a compiler's own tracer traces each compile; a tracer that throws or returns junk changes nothing", async () => {
  const { tracer, spans } = otel();
  const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector()], tracer });
  const session = new Session({ sessionId: "compiles" });
  session.record("user_input", "hello");
  const ctx = await compiler.compile(session, 2000, { systemPrompt: "sys" });
  const [span] = spans();
  assert.equal(span.name, "compile_context");
  assert.equal(span.attributes["agent_context_compiler.tokens"], ctx.tokenCount);
  assert.equal(span.attributes["agent_context_compiler.budget"], 2000);

  for (const hostile of [
    { startSpan() { throw new Error("exporter down"); } },
    { startSpan: () => 42 },
    { startSpan: () => ({ setAttributes() { throw new Error("x"); }, setAttribute() { throw new Error("x"); }, setStatus() { throw new Error("x"); }, end() { throw new Error("x"); } }) },
  ]) {
    const result = await run({ tracer: hostile });
    assert.equal(result.result, "Done.");
    const traced = new ContextCompiler({ tracer: hostile });
    assert.ok((await traced.compile(session, 2000, { systemPrompt: "sys" })).tokenCount > 0);
  }
});

test("a tracer without startSpan is INVALID_ARGUMENT before anything runs", async () => {
  await rejectsWithCode(() => run({ tracer: {} }), "INVALID_ARGUMENT", "OpenTelemetry Tracer");
  assert.throws(() => new ContextCompiler({ tracer: "yes" }), (e) => e.code === "INVALID_ARGUMENT");
  await rejectsWithCode(() => run({ tracer: otel().tracer, traceContent: "yes" }), "INVALID_ARGUMENT");
});

test("runCompiled's spans name the provider (the format's or providerName), the agent, and what each response said of itself", async () => {
  const { tracer, spans } = otel();
  const reply = (step) =>
    step === 0
      ? { id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-5", stop_reason: "tool_use", content: [{ type: "tool_use", id: "toolu_1", name: "lookup", input: {} }], usage: { input_tokens: 100, output_tokens: 5 } }
      : { id: "msg_2", type: "message", role: "assistant", model: "claude-sonnet-4-5", stop_reason: "end_turn", content: [{ type: "text", text: "Done." }], usage: { input_tokens: 120, output_tokens: 2 } };
  await runCompiled("Check the config", { budget: 4000, tools, bridge, model: (_m, { step }) => reply(step), tracer, format: "anthropic", agentName: "sre" });
  const turn = spans().find((s) => s.name.startsWith("invoke_agent"));
  assert.equal(turn.name, "invoke_agent sre");
  assert.equal(turn.attributes["gen_ai.agent.name"], "sre");
  const chats = spans().filter((s) => s.name.startsWith("chat"));
  assert.deepEqual(chats.map((s) => s.attributes["gen_ai.provider.name"]), ["anthropic", "anthropic"]);
  assert.deepEqual(chats.map((s) => s.attributes["gen_ai.response.id"]), ["msg_1", "msg_2"]);
  assert.deepEqual(chats.map((s) => s.attributes["gen_ai.response.model"]), ["claude-sonnet-4-5", "claude-sonnet-4-5"]);
  assert.deepEqual(chats.map((s) => s.attributes["gen_ai.response.finish_reasons"]), [["tool_use"], ["end_turn"]]);
  const named = otel();
  await runCompiled("hi", { budget: 4000, model: () => "Hi.", tracer: named.tracer, format: "ai-sdk", providerName: "aws.bedrock" });
  assert.equal(named.spans().find((s) => s.name.startsWith("chat")).attributes["gen_ai.provider.name"], "aws.bedrock");
  const none = otel();
  await runCompiled("hi", { budget: 4000, model: () => "Hi.", tracer: none.tracer, format: "ai-sdk" });
  assert.equal(none.spans().find((s) => s.name.startsWith("chat")).attributes["gen_ai.provider.name"], undefined, "the AI SDK format names no provider");
  await assert.rejects(runCompiled("hi", { budget: 4000, model: () => "Hi.", agentname: "x" }), { code: "INVALID_ARGUMENT", message: /did you mean agentName/ });
});
