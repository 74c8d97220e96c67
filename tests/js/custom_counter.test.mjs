// A token counter of your own wherever `tokenCounter` is accepted: budgets
// hold in its tokens, and a counter that fails makes the call that counted
// fail with TOKEN_COUNTER_FAILED, keeping nothing.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ContextCompiler, ContextWindow, EventLog, HistorySelector, MemoryArtifactStore, Session,
} from "agent-context-compiler";
import { rejectsWithCode } from "./helpers.mjs";

/** One token a character: easy to check by hand. */
const chars = (text) => text.length;

test("a function or a { count, messageOverhead } object counts events and compiles", async () => {
  const s = new Session({ tokenCounter: chars });
  assert.equal(s.record("user_input", "hello").tokenEstimate, 5);
  assert.equal(s.record("assistant_output", "hi there").tokenEstimate, 8);
  assert.equal(s.eventLog.totalTokens(), 13);
  const log = new EventLog({ tokenCounter: { count: (t) => t.length / 2, messageOverhead: 4 } });
  assert.equal(log.append("user_input", "abc").tokenEstimate, 2, "fractions round up");
  // The zoned compile fits the budget in the counter's own tokens.
  for (let i = 0; i < 40; i++) s.record(i % 2 ? "assistant_output" : "user_input", `message number ${i} `.repeat(5));
  const compiler = new ContextCompiler({ processors: [new HistorySelector({ keepFirst: 1, keepLast: 100 })], layout: "zoned" });
  const ctx = await compiler.compile(s, 600, { systemPrompt: "Be brief." });
  const used = ctx.toMessages().reduce((n, m) => n + m.content.length, 0);
  assert.ok(used <= 600, `${used} characters`);
  assert.ok(used > 300, `${used}: the budget is used, not starved`);
  assert.ok(ctx.tokenCount <= 600);
});

test("a counter that throws, answers a non-number or a promise: TOKEN_COUNTER_FAILED, nothing recorded", async () => {
  const bad = [
    [() => { throw new Error("tokenizer crashed"); }, "tokenizer crashed"],
    [() => -1, "instead of a non-negative number"],
    [() => "12", "instead of a non-negative number"],
    [() => NaN, "instead of a non-negative number"],
    [async () => 3, "must answer synchronously"],
  ];
  for (const [counter, message] of bad) {
    const s = new Session({ tokenCounter: counter });
    await rejectsWithCode(() => s.record("user_input", "hello"), "TOKEN_COUNTER_FAILED", message);
    assert.equal(s.eventLog.length, 0);
    // The estimate given up front needs no count of the data itself,
    // but the event's rendered form is still counted.
    await rejectsWithCode(() => s.record("user_input", "hello", { tokenEstimate: 2 }), "TOKEN_COUNTER_FAILED");
    assert.equal(s.eventLog.length, 0);
  }
});

test("a counter that fails during a compile fails the compile and leaves the session as it was", async () => {
  let fail = false;
  const s = new Session({ tokenCounter: (t) => { if (fail) throw new Error("quota"); return t.length; } });
  for (let i = 0; i < 10; i++) s.record("user_input", `question ${i}`);
  const before = s.exportJson();
  fail = true;
  const compiler = new ContextCompiler({ processors: [new HistorySelector({ keepFirst: 1, keepLast: 5 })], layout: "zoned" });
  await rejectsWithCode(() => compiler.compile(s, 50, { systemPrompt: "x" }), "TOKEN_COUNTER_FAILED", "quota");
  assert.equal(s.exportJson(), before);
  fail = false;
  const ctx = await compiler.compile(s, 50, { systemPrompt: "x" });
  assert.ok(ctx.tokenCount <= 50);
});

test("importing or loading with a failing counter fails; nothing half-made is returned", async () => {
  const s = new Session({ sessionId: "s1" });
  s.record("user_input", "some text");
  const boom = () => { throw new Error("nope"); };
  await rejectsWithCode(() => Session.importJson(s.exportJson(), { tokenCounter: boom }), "TOKEN_COUNTER_FAILED");
  const store = new MemoryArtifactStore();
  await store.saveSession(s);
  await rejectsWithCode(() => store.loadSession("s1", { tokenCounter: boom }), "TOKEN_COUNTER_FAILED");
  const back = await store.loadSession("s1", { tokenCounter: chars });
  assert.equal(back.record("user_input", "four").tokenEstimate, 4);
});

test("ContextWindow: a failing count adds nothing; compile and stats fail instead of returning guesses", async () => {
  let fail = false;
  const w = new ContextWindow({ maxContextTokens: 10_000, tokenCounter: { count: (t) => { if (fail) throw new Error("down"); return t.length; }, messageOverhead: 3 } });
  w.setSystemPrompt("You are terse.");
  w.appendMessage("user", "hello");
  assert.equal(w.workingItems[0].tokenEstimate, 5 + 3);
  fail = true;
  await rejectsWithCode(() => w.appendMessage("user", "lost?"), "TOKEN_COUNTER_FAILED", "down");
  await rejectsWithCode(() => w.appendToolResult("bash", "ok"), "TOKEN_COUNTER_FAILED");
  await rejectsWithCode(() => w.compactWorkingMemory("summary"), "TOKEN_COUNTER_FAILED");
  assert.equal(w.workingItems.length, 1);
  await rejectsWithCode(() => w.compile(), "TOKEN_COUNTER_FAILED");
  // Stats count the system prompt's section anew.
  await rejectsWithCode(() => w.getStats(), "TOKEN_COUNTER_FAILED");
  fail = false;
  assert.equal(w.compile().messages.length > 0, true);
});

test("tokenCounter values that are not counters are INVALID_ARGUMENT", async () => {
  for (const bad of ["o200k", 3, { count: 1 }, { counts: () => 1 }]) {
    await rejectsWithCode(() => new Session({ tokenCounter: bad }), "INVALID_ARGUMENT", "tokenCounter must be");
  }
  await rejectsWithCode(() => new Session({ tokenCounter: { count: () => 1, messageOverhead: -2 } }), "INVALID_ARGUMENT", "messageOverhead");
});

test("a counter that counts a token for the empty string (a BOS token) compiles within budget", async () => {
  const bos = { count: (t) => Math.ceil(t.length / 4) + 1, messageOverhead: 3 };
  const s = new Session({ tokenCounter: bos });
  for (const n of [5, 50, 5000]) s.record("user_input", "x".repeat(n));
  for (const layout of ["zoned", undefined]) {
    const compiler = new ContextCompiler({ layout, processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity })] });
    for (const systemPrompt of ["sys", ""]) {
      const ctx = await compiler.compile(s, 1000, { systemPrompt });
      assert.ok(ctx.tokenCount <= 1000, `${layout}: ${ctx.tokenCount}`);
      ctx.free();
    }
  }
  const w = new ContextWindow({ maxContextTokens: 1000, tokenCounter: bos });
  for (const n of [5, 50, 5000]) w.appendMessage("user", "x".repeat(n));
  assert.ok(w.compile().totalTokens <= 1000);
  assert.equal(s.record("user_input", "still alive").kind, "user_input", "the module lives");
});
