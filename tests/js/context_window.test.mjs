// Seed 004's 4-zone ContextWindow from JS: headings, goal at both ends,
// importance defaults and clamping, thresholds at exactly 80/90/95%,
// compaction, stats consistent with compile, never over the window.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ContextWindow, DEFAULT_ZONE_BUDGETS, COMPACT_LIGHT, COMPACT_FULL, COMPACT_EMERGENCY,
} from "agent-context-compiler";
import { rejectsWithCode } from "./helpers.mjs";

function seedExample() {
  const w = new ContextWindow({ maxContextTokens: 128_000 });
  w.setSystemPrompt("You are a helpful coding assistant.");
  w.setGoal("Build a REST API for user management");
  w.setUserPreferences({ language: "en", verbosity: "concise" });
  w.setPolicies(["Never expose PII", "Always validate input"]);
  w.setToolDefinitions([{ name: "code_writer" }, { name: "bash" }]);
  w.setBrainDigest({ active_concept: "rest_api", confidence: 0.85 });
  w.setTaskState("Creating the User model");
  w.appendMessage("user", "Create the user model");
  w.appendMessage("assistant", "Here is the User model...");
  w.appendToolResult("code_writer", "file created: models/user.py", { success: true });
  w.addRecentMessage("user", "Now add validation", { importance: 0.9 });
  return w;
}

test("named exports are the seed's constants", () => {
  assert.deepEqual({ ...DEFAULT_ZONE_BUDGETS }, { system: 0.12, persistent: 0.08, working: 0.4, recent: 0.4 });
  assert.equal(COMPACT_LIGHT, 0.8);
  assert.equal(COMPACT_FULL, 0.9);
  assert.equal(COMPACT_EMERGENCY, 0.95);
  assert.ok(Object.isFrozen(DEFAULT_ZONE_BUDGETS));
  // The JS constants are the core's.
  assert.deepEqual(new ContextWindow().zoneBudgets, { ...DEFAULT_ZONE_BUDGETS });
  assert.equal(new ContextWindow().maxContextTokens, 128_000);
  const custom = new ContextWindow({ maxContextTokens: 1000, zoneBudgets: { working: 0.3, recent: 0.3 } });
  assert.deepEqual(custom.zoneBudgets, { system: 0.12, persistent: 0.08, working: 0.3, recent: 0.3 });
});

test("every heading, the zones in order, the goal at both ends", () => {
  const ctx = seedExample().compile();
  const m = ctx.messages;
  assert.match(m[0].content, /^You are a helpful coding assistant\./);
  assert.ok(m[0].content.includes("## Policies\n- Never expose PII\n- Always validate input"));
  assert.ok(m[0].content.includes("## Available Tools\n- code_writer\n- bash"));
  assert.ok(m[0].content.includes('## User Preferences\n{"language":"en","verbosity":"concise"}'));
  assert.ok(m[1].content.startsWith("## Current Goal\nBuild a REST API for user management"));
  assert.ok(m[1].content.includes('## Brain State\n{"active_concept":"rest_api","confidence":0.85}'));
  assert.deepEqual(m[4], { role: "tool", content: "[code_writer] file created: models/user.py" });
  assert.equal(m[5].content, "## Current Task\nCreating the User model");
  assert.equal(m[6].content, "Now add validation");
  assert.equal(m.at(-1).content, "## Goal (restated)\nBuild a REST API for user management");
  assert.equal(ctx.compactionLevel, "none");
  assert.equal(ctx.compactionNeeded, false);
  assert.deepEqual(ctx.dropped, []);
  assert.equal(ctx.totalTokens, Object.values(ctx.zoneUsage).reduce((a, b) => a + b, 0));
});

test("importance defaults and clamping", async () => {
  const w = new ContextWindow();
  w.appendMessage("user", "a");
  w.appendMessage("user", "b", { importance: 7 });
  w.appendMessage("user", "c", { importance: -1 });
  w.appendToolResult("t", "ok");
  w.appendToolResult("t", "boom", { success: false });
  w.addRecentMessage("user", "d");
  assert.deepEqual(w.workingItems.map((i) => i.importance), [0.5, 1, 0, 0.4, 0.8]);
  assert.deepEqual(w.recentItems.map((i) => i.importance), [0.7]);
  assert.equal(w.workingItems[4].content, "[t failed] boom");
  assert.deepEqual(w.workingItems[4].metadata, { tool_name: "t", success: false });
  assert.equal(w.workingItems[0].zone, "working");
  assert.ok(w.workingItems[0].timestamp > 1.6e12);
  await rejectsWithCode(() => w.appendMessage("user", "x", { importance: NaN }), "INVALID_ARGUMENT");
  await rejectsWithCode(() => w.appendMessage("user", "x", { importance: "high" }), "INVALID_ARGUMENT");
  await rejectsWithCode(() => w.appendToolResult("t", "x", { success: "yes" }), "INVALID_ARGUMENT");
  assert.equal(w.workingItems.length, 5);
});

/** A window holding one recent message whose total is exactly `target` tokens. */
function windowWithTotal(target, max = 100) {
  for (let n = 1; n < 400; n++) {
    const w = new ContextWindow({ maxContextTokens: max });
    w.addRecentMessage("user", "word ".repeat(n).trim());
    if (w.getStats().totalTokensEstimate === target) return w;
  }
  throw new Error(`no message totals ${target} tokens`);
}

test("compaction levels switch at exactly 80, 90 and 95 percent", () => {
  for (const [total, level] of [[79, "none"], [80, "light"], [89, "light"], [90, "full"], [94, "full"], [95, "emergency"]]) {
    const w = windowWithTotal(total);
    assert.equal(w.getCompactionLevel(), level, `${total}`);
    const ctx = w.compile();
    assert.equal(ctx.compactionLevel, level);
    assert.equal(ctx.compactionNeeded, level !== "none");
    const stats = w.getStats();
    assert.equal(stats.compactionLevel, level);
    assert.equal(stats.utilization, total / 100);
    assert.equal(stats.demandRatio, total / 100);
  }
});

test("utilization stays in [0, 1] (seed 004) when the zones hold more than fits; demandRatio says how much more", () => {
  const w = new ContextWindow({ maxContextTokens: 100, tokenCounter: (t) => t.length });
  w.appendMessage("user", "x".repeat(1330));
  const stats = w.getStats();
  assert.equal(stats.utilization, 1);
  assert.ok(stats.demandRatio > 13, `${stats.demandRatio}`);
  assert.equal(stats.compactionLevel, "emergency");
  assert.ok(w.compile().totalTokens <= 100);
});

test("compaction keeps what the seed says", () => {
  const w = seedExample();
  w.writeScratchpad("note");
  w.compactWorkingMemory("Model done; validation next.");
  assert.equal(w.workingItems.length, 1);
  assert.ok(w.workingItems[0].content.includes("Model done; validation next."));
  assert.deepEqual(w.scratchpadNotes, []);
  assert.equal(w.recentItems.length, 1);

  const e = seedExample();
  e.addRecentMessage("assistant", "Adding validators");
  e.addRecentMessage("user", "Use pydantic");
  e.emergencyCompact("Built the model.");
  const stats = e.getStats();
  assert.deepEqual(
    [stats.workingItems, stats.scratchpadNotes, stats.recentItems, stats.goalSet],
    [1, 0, 2, true],
  );
  const texts = e.compile().messages.map((m) => m.content);
  assert.ok(texts.some((t) => t.includes("Built the model.")));
  assert.ok(!texts.some((t) => t.includes("## Brain State") || t.includes("## Current Task")));
  assert.ok(texts.at(-1).startsWith("## Goal (restated)"));
});

test("getStats agrees with compile", () => {
  const w = seedExample();
  w.writeScratchpad("check the index");
  const s = w.getStats();
  const c = w.compile();
  assert.deepEqual(Object.keys(s).sort(), [
    "compactionLevel", "demandRatio", "goalSet", "maxContextTokens", "persistentTokens", "recentItems", "recentTokens",
    "scratchpadNotes", "systemTokens", "totalTokensEstimate", "utilization", "workingItems", "workingTokens",
  ]);
  assert.deepEqual(
    [s.systemTokens, s.persistentTokens, s.workingTokens, s.recentTokens, s.totalTokensEstimate],
    [c.zoneUsage.system, c.zoneUsage.persistent, c.zoneUsage.working, c.zoneUsage.recent, c.totalTokens],
  );
  assert.deepEqual([s.workingItems, s.scratchpadNotes, s.recentItems], [3, 1, 1]);
  assert.equal(s.compactionLevel, c.compactionLevel);
});

test("compile never exceeds maxContextTokens", () => {
  for (const max of [5, 20, 60, 200]) {
    const w = seedExample();
    const big = new ContextWindow({ maxContextTokens: max });
    big.setSystemPrompt("You are a helpful coding assistant.");
    big.setGoal("Build a REST API");
    for (let i = 0; i < 20; i++) big.appendMessage("user", `message ${i} `.repeat(10), { importance: (i % 10) / 10 });
    big.addRecentMessage("user", "Now add validation ".repeat(30));
    const ctx = big.compile();
    assert.ok(ctx.totalTokens <= max, `${max}: ${ctx.totalTokens}`);
    assert.ok(ctx.dropped.length > 0);
    assert.equal(ctx.compactionLevel, "emergency");
    assert.ok(w.compile().totalTokens <= 128_000);
  }
});

test("bad input is a clear error", async () => {
  await rejectsWithCode(() => new ContextWindow({ maxContextTokens: 0 }), "INVALID_BUDGET");
  await rejectsWithCode(() => new ContextWindow({ maxContextTokens: 1.5 }), "INVALID_BUDGET");
  await rejectsWithCode(() => new ContextWindow({ zoneBudgets: { hot: 0.1 } }), "INVALID_ARGUMENT", "unknown zone");
  await rejectsWithCode(() => new ContextWindow({ zoneBudgets: { working: 0.9 } }), "INVALID_ARGUMENT", "sum");
  await rejectsWithCode(() => new ContextWindow({ zoneBudgets: { working: "a lot" } }), "INVALID_ARGUMENT");
  const w = new ContextWindow();
  await rejectsWithCode(() => w.setToolDefinitions([{ description: "no name" }]), "INVALID_ARGUMENT", "name");
  await rejectsWithCode(() => w.setUserPreferences([1, 2]), "INVALID_ARGUMENT");
  await rejectsWithCode(() => w.setBrainDigest({ f() {} }), "NOT_SERIALIZABLE");
});
