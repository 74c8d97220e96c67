// The seed's test_working_context, ported.
import { test } from "node:test";
import assert from "node:assert/strict";
import { WorkingContext } from "agent-context-compiler";
import { rejectsWithCode } from "./helpers.mjs";

test("budget checking", () => {
  const ctx = new WorkingContext({
    systemPrompt: "You are a helpful assistant.",
    history: [{ role: "user", content: "hello" }],
    memoryHits: [], artifactRefs: [], toolResults: [],
    tokenCount: 50, budget: 100,
  });
  assert.ok(ctx.isWithinBudget());
  assert.equal(ctx.overflow(), 0);
  const over = new WorkingContext({ systemPrompt: "x", tokenCount: 150, budget: 100 });
  assert.ok(!over.isWithinBudget());
  assert.equal(over.overflow(), 50);
});

test("to messages", () => {
  const ctx = new WorkingContext({
    systemPrompt: "You are helpful.",
    history: [{ role: "user", content: "What is 2+2?" }, { role: "assistant", content: "4" }],
    memoryHits: [{ key: "math", content: "basic arithmetic" }],
    artifactRefs: [{ handle: "abc123", summary: "large file", sizeBytes: 5000 }],
    toolResults: [{ tool: "calc", result: "4" }],
    tokenCount: 80, budget: 200,
  });
  const msgs = ctx.toMessages();
  assert.equal(msgs[0].role, "system");
  assert.ok(msgs[0].content.includes("You are helpful."));
  assert.ok(msgs[0].content.includes("basic arithmetic"));
  assert.ok(msgs[0].content.includes("- [abc123] (5000 bytes): large file"));
  assert.ok(msgs[0].content.includes("- calc: 4"));
  assert.equal(msgs[1].role, "user");
  assert.equal(msgs[2].role, "assistant");
  assert.deepEqual(JSON.parse(JSON.stringify(ctx)).history, [
    { role: "user", content: "What is 2+2?" }, { role: "assistant", content: "4" },
  ]);
});

test("a malformed context is a clear error", async () => {
  await rejectsWithCode(() => new WorkingContext({ history: [] }), "INVALID_ARGUMENT", "systemPrompt");
  await rejectsWithCode(() => new WorkingContext({ systemPrompt: "x", tokenCount: -1 }), "INVALID_ARGUMENT");
  await rejectsWithCode(() => new WorkingContext({ systemPrompt: "x", history: [{ role: "user" }] }), "INVALID_ARGUMENT", "content");
});
