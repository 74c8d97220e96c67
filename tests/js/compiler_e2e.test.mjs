// The seed's test_context_compiler_e2e, ported, plus budget errors and session busy.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ArtifactAttacher, Compactor, ContextCompiler, HistorySelector, MemoryArtifactStore, Session,
  TokenBudget, countTokens,
} from "agent-context-compiler";
import { gatedProcessor, rejectsWithCode } from "./helpers.mjs";

function pipeline(store) {
  return new ContextCompiler({
    processors: [new HistorySelector({ keepFirst: 2, keepLast: 3 }), new Compactor(), new ArtifactAttacher(store, { thresholdBytes: 1024 })],
  });
}

test("large payload externalized", async () => {
  const store = new MemoryArtifactStore();
  const s = new Session();
  s.record("user_input", { text: "Analyze this file" }, { tokenEstimate: 10 });
  const large = "Line of output data. ".repeat(500);
  s.record("tool_success", { tool: "file_read", result: large });
  const ctx = await pipeline(store).compile(s, 500, { systemPrompt: "You are helpful." });
  // The seed asserted `>= 0` (its attacher never saw session tool results); the intent is 1.
  assert.equal(ctx.artifactRefs.length, 1);
  assert.ok(ctx.tokenCount < 500);
  assert.equal(new TextDecoder().decode(await store.retrieve(ctx.artifactRefs[0].handle)), large);
  // A second compile reuses the handle and records nothing new.
  const again = await pipeline(store).compile(s, 500, { systemPrompt: "You are helpful." });
  assert.deepEqual(again.toMessages(), ctx.toMessages());
  assert.equal(s.eventLog.filter(["artifact_stored"]).length, 1);
});

test("budget respected", async () => {
  const s = new Session();
  for (let i = 0; i < 50; i++) {
    s.record("user_input", { role: "user", content: `This is message number ${i} with some content` }, { tokenEstimate: 15 });
  }
  const ctx = await new ContextCompiler({ processors: [new HistorySelector({ keepFirst: 2, keepLast: 3 })] })
    .compile(s, new TokenBudget(200), { systemPrompt: "Short prompt." });
  assert.equal(ctx.history.length, 5);
  assert.ok(ctx.tokenCount < 200);
  const exact = ctx.toMessages().reduce((n, m) => n + countTokens(m.content) + 3, 0);
  assert.equal(ctx.tokenCount, exact, "tokenCount is the exact count of the messages");
});

test("bad budgets and options", async () => {
  const s = new Session();
  s.record("user_input", "hello");
  const c = new ContextCompiler();
  for (const bad of [0, -5, NaN, 2.5, "100", undefined, {}]) {
    await rejectsWithCode(() => c.compile(s, bad), "INVALID_BUDGET");
  }
  await rejectsWithCode(() => c.compile(s, 2, { systemPrompt: "x" }), "BUDGET_TOO_SMALL");
  await rejectsWithCode(() => c.compile(s, 100, { systemPrompt: 5 }), "INVALID_ARGUMENT", "systemPrompt");
});

test("a 50 MB tool result is externalised and the context stays within budget", async () => {
  const s = new Session();
  const big = "log line 12345 status=ok\n".repeat(2 * 1024 * 1024);
  s.record("user_input", "summarise the logs");
  s.record("tool_success", { tool: "logs", result: big });
  const store = new MemoryArtifactStore();
  const ctx = await pipeline(store).compile(s, 4000, { systemPrompt: "sys" });
  assert.ok(ctx.tokenCount <= 4000);
  assert.equal(ctx.artifactRefs[0].sizeBytes, big.length);
});

test("recording while a compile runs is queued behind its view, never refused", async () => {
  const s = new Session();
  s.record("user_input", "hi");
  const { processor: slow, inside, release } = gatedProcessor();
  const running = new ContextCompiler({ processors: [new HistorySelector(), slow] }).compile(s, 100);
  await inside;
  const during = s.record("user_input", "during");
  assert.equal(during.kind, "user_input");
  assert.ok(during.tokenEstimate > 0);
  assert.equal(s.eventLog.length, 2, "the queued event is visible at once");
  assert.equal(s.eventLog.events[1].eventId, during.eventId);
  assert.match(s.exportJson(), /during/);
  release();
  const ctx = await running;
  assert.ok(!JSON.stringify(ctx.toMessages()).includes("during"), "the compile saw its own view");
  s.record("user_input", "after");
  assert.deepEqual(
    s.eventLog.events.map((e) => e.data),
    ["hi", "during", "after"],
  );
  const again = await new ContextCompiler({ processors: [new HistorySelector()] }).compile(s, 100);
  assert.ok(JSON.stringify(again.toMessages()).includes("during"));
});

test("two compiles of one session with async processors both resolve", async () => {
  const s = new Session();
  s.record("user_input", "hi");
  s.record("tool_success", { tool: "t", result: "x".repeat(5000) });
  const store = new MemoryArtifactStore();
  const wait = async (session, ctx) => {
    await new Promise((r) => setTimeout(r, 5));
    return ctx;
  };
  const compiler = new ContextCompiler({
    processors: [new HistorySelector(), wait, new ArtifactAttacher(store, { thresholdBytes: 100 })],
  });
  const [a, b] = await Promise.all([compiler.compile(s, 2000), compiler.compile(s, 2000)]);
  assert.ok(a.tokenCount <= 2000 && b.tokenCount <= 2000);
  const stored = s.eventLog.events.filter((e) => e.kind === "artifact_stored");
  assert.equal(stored.length, 1, "the race to externalise is recorded once");
});
