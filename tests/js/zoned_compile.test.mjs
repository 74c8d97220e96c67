// The zoned layout from JS: the recommended pipeline on a tool-using
// session, provider formats with every call paired with its result,
// a stable prefix, compaction recorded in the session with an injected
// summariser, and the built-in processors run on their own.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ArtifactAttacher, Compactor, ContextCompiler, HistorySelector, InMemoryBackend, MemoryArtifactStore,
  MemoryPreloader, PerceptionAligner, SchemaRegistry, Session, TokenBudget, ToolInterruptHandler, WorkingContext,
} from "agent-context-compiler";
import { rejectsWithCode } from "./helpers.mjs";

const OPTIONS = {
  systemPrompt: "You are an SRE.",
  policies: ["Never delete data"],
  toolDefinitions: [{ name: "read_logs" }, { name: "df" }],
  userPreferences: { tone: "brief" },
  goal: "Find why the nightly job fails",
  stateDigest: { phase: "diagnose" },
  taskState: "Reading the logs",
};

function pipeline(store, compactor = new Compactor()) {
  const memory = new InMemoryBackend();
  memory.store("db", "The nightly job writes to db-primary", "fact");
  return new ContextCompiler({
    layout: "zoned",
    processors: [
      new HistorySelector({ keepFirst: 1, keepLast: Infinity }),
      new ArtifactAttacher(store, { thresholdBytes: 4096 }),
      compactor,
      new MemoryPreloader(memory, { topK: 3 }),
    ],
  });
}

async function agentSession() {
  const session = new Session({ sessionId: "zoned" });
  const store = new MemoryArtifactStore();
  const handler = new ToolInterruptHandler({
    session,
    normalizer: new PerceptionAligner(new SchemaRegistry()),
    artifactStore: store,
    externalizeThreshold: 4096,
    bridge: async (name, args) => {
      if (name === "fail") throw new Error("permission denied");
      if (name === "big") return "x".repeat(10_000);
      return `${name}(${JSON.stringify(args)}) ok`;
    },
  });
  session.record("user_input", { text: "The nightly job failed. Why?" });
  session.record("assistant_output", { text: "Let me look." });
  await Promise.all([handler.call("read_logs", { path: "/var/log/job.log" }), handler.call("df", {})]);
  await handler.call("fail", {});
  await handler.call("big", {});
  session.record("assistant_output", { text: "The disk is full." });
  session.record("user_input", { text: "Clean it up, keep the backups." });
  return { session, store, handler };
}

test("the zoned layout puts what changes per call last", async () => {
  const { session, store } = await agentSession();
  const compiler = pipeline(store);
  assert.equal(compiler.layout, "zoned");
  const ctx = await compiler.compile(session, 32_000, OPTIONS);
  assert.equal(ctx.layout, "zoned");
  const m = ctx.toMessages();
  assert.equal(m[0].content, 'You are an SRE.\n\n## Policies\n- Never delete data\n\n## Available Tools\n- read_logs\n- df\n\n## User Preferences\n{"tone":"brief"}');
  assert.equal(m[1].content, '## Current Goal\nFind why the nightly job fails\n\n## Brain State\n{"phase":"diagnose"}');
  assert.equal(m[2].content, "The nightly job failed. Why?");
  assert.equal(m.at(-2).content, "Clean it up, keep the backups.");
  assert.match(m.at(-1).content, /^## Relevant memories\n- \[db\]: The nightly job writes to db-primary/);
  assert.ok(m.at(-1).content.endsWith("## Current Task\nReading the logs\n\n## Goal (restated)\nFind why the nightly job fails"));
  assert.equal(ctx.goal, "Find why the nightly job fails");
  const usage = ctx.zoneUsage;
  assert.equal(usage.system + usage.persistent + usage.working + usage.recent, ctx.tokenCount);
  assert.ok(usage.working > 0 && usage.recent > 0);
  assert.equal(ctx.compactionLevel, "none");
  // The externalised output is its call's result: handle and summary.
  const big = ctx.history.find((h) => h.toolName === "big");
  assert.ok(big.artifact.handle.length === 64 && big.content.includes(big.artifact.handle));
});

test("openai, anthropic and ai-sdk messages pair every call with its result", async () => {
  const { session, store } = await agentSession();
  const ctx = await pipeline(store).compile(session, 32_000, OPTIONS);

  const openai = ctx.toMessages({ format: "openai" });
  const calls = openai.filter((x) => x.tool_calls);
  assert.deepEqual(calls.map((x) => x.tool_calls.map((c) => c.function.name)), [["read_logs", "df"], ["fail"], ["big"]]);
  assert.equal(calls[0].content, "Let me look.");
  for (const c of calls) {
    const i = openai.indexOf(c);
    c.tool_calls.forEach((call, k) => {
      assert.equal(call.type, "function");
      assert.equal(typeof call.function.arguments, "string");
      assert.deepEqual(openai[i + 1 + k], { role: "tool", tool_call_id: call.id, content: openai[i + 1 + k].content });
    });
  }
  assert.equal(openai.filter((x) => x.role === "tool").length, 4);
  assert.equal(openai.at(-1).role, "user", "the per-turn tail is a user message");

  const anthropic = ctx.toMessages({ format: "anthropic" });
  assert.equal(anthropic.system.length, 2);
  assert.deepEqual(anthropic.system[0].cache_control, { type: "ephemeral" });
  const blocks = anthropic.messages.flatMap((x) => x.content);
  assert.ok(blocks.filter((b) => b.cache_control).length + 2 <= 4);
  const uses = blocks.filter((b) => b.type === "tool_use").map((b) => b.id);
  const results = blocks.filter((b) => b.type === "tool_result").map((b) => b.tool_use_id);
  assert.deepEqual(uses, results);
  assert.ok(blocks.find((b) => b.type === "tool_result" && b.is_error === true).content.startsWith("error:"));
  anthropic.messages.forEach((x, i) => i && assert.notEqual(x.role, anthropic.messages[i - 1].role));
  assert.equal(anthropic.messages.at(-1).content.at(-1).type, "text");

  const { instructions, messages: ai } = ctx.toMessages({ format: "ai-sdk" });
  assert.ok(instructions.length >= 1 && instructions.every((m) => m.role === "system"));
  assert.deepEqual(instructions.at(-1).providerOptions, { anthropic: { cacheControl: { type: "ephemeral" } } });
  assert.ok(ai.every((x) => x.role !== "system"), "no system message among messages (the ai package refuses them)");
  const parts = ai.filter((x) => x.role === "tool").flatMap((x) => x.content);
  assert.ok(parts.every((p) => p.type === "tool-result"));
  assert.equal(parts.find((p) => p.toolName === "fail").output.type, "error-text");
  const aiCalls = ai.filter((x) => Array.isArray(x.content) && x.role === "assistant").flatMap((x) => x.content).filter((p) => p.type === "tool-call");
  assert.deepEqual(aiCalls.map((p) => p.toolCallId), parts.map((p) => p.toolCallId));
  assert.deepEqual(aiCalls[0].input, { path: "/var/log/job.log" });

  await rejectsWithCode(() => ctx.toMessages({ format: "bard" }), "INVALID_ARGUMENT", "format");
  await rejectsWithCode(() => ctx.toMessages("openai"), "INVALID_ARGUMENT");
});

test("the prefix repeats from call to call until a compaction", async () => {
  const { session, store, handler } = await agentSession();
  const compiler = pipeline(store);
  let previous = (await compiler.compile(session, 32_000, OPTIONS)).toMessages({ format: "openai" });
  for (let t = 0; t < 5; t++) {
    await handler.call("read_logs", { turn: t });
    session.record("assistant_output", { text: `step ${t}` });
    session.record("user_input", { text: `next ${t}` });
    const now = (await compiler.compile(session, 32_000, OPTIONS)).toMessages({ format: "openai" });
    assert.deepEqual(now.slice(0, previous.length - 1), previous.slice(0, -1), `turn ${t}`);
    previous = now;
  }
});

test("compaction uses the injected summarizer, records it, and survives its failure", async () => {
  const prompts = [];
  for (const [i, summarizer] of [
    async (prompt, { maxTokens }) => { prompts.push([prompt, maxTokens]); return "The job fails writing to db-primary."; },
    () => { throw new Error("model down"); },
    { complete: async () => 42 },
  ].entries()) {
    const session = new Session();
    const store = new MemoryArtifactStore();
    const compiler = pipeline(store, new Compactor({ summarizer, target: 0.4 }));
    let ctx;
    for (let t = 0; t < 40 && !ctx?.summary; t++) {
      session.record("user_input", { text: `turn ${t}: what does the log say?` });
      session.record("tool_success", { tool: "read_logs", result: `line ${t} `.repeat(200) });
      session.record("assistant_output", { text: `Turn ${t}: retries against db-primary.` });
      ctx = await compiler.compile(session, 4_000, OPTIONS);
      assert.ok(ctx.tokenCount <= 4_000);
    }
    assert.ok(ctx.summary, "compacted");
    const event = session.eventLog.events.findLast((e) => e.kind === "context_compacted");
    assert.equal(event.data.summary, ctx.summary);
    assert.ok(["full", "emergency"].includes(event.data.level));
    if (i === 0) {
      assert.equal(ctx.summary, "The job fails writing to db-primary.");
      assert.match(prompts[0][0], /Conversation to summarise:/);
      // A tenth of the budget the context is fitted to (4,000 less the
      // default counter's content margin).
      assert.equal(prompts[0][1], Math.floor(ctx.budget / 10));
    } else {
      assert.match(ctx.summary, /earlier turns were compacted/);
      assert.ok(event.data.summarizer_error);
    }
    // Exported and imported, the session compiles to the same messages.
    const again = await compiler.compile(session, 4_000, OPTIONS);
    const imported = Session.importJson(session.exportJson());
    const after = await compiler.compile(imported, 4_000, OPTIONS);
    assert.deepEqual(after.toMessages(), again.toMessages());
  }
  await rejectsWithCode(() => new Compactor({ target: 0.9 }), "INVALID_ARGUMENT");
  await rejectsWithCode(() => new Compactor({ summarizer: "gpt" }), "INVALID_ARGUMENT");
});

test("built-in processors run on their own: process(session, ctx, budget)", async () => {
  const { session, store } = await agentSession();
  const empty = { systemPrompt: "sys", layout: "zoned" };
  const selected = await new HistorySelector({ keepFirst: 1, keepLast: Infinity }).process(session, empty, 32_000);
  assert.ok(selected instanceof WorkingContext);
  assert.ok(selected.history.some((h) => h.toolCallId));
  const compacted = await new Compactor().process(session, selected, new TokenBudget(32_000));
  assert.equal(compacted.compactionLevel, "none");
  const single = await new HistorySelector().process(session, { systemPrompt: "sys" }, 32_000);
  assert.equal(single.layout, "single-system");
  assert.ok(single.toolResults.length + single.artifactRefs.length > 0);
  assert.equal(new ContextCompiler({ layout: "single-system" }).layout, "single-system");
  assert.equal(new ContextCompiler().layout, "single-system");
  // The layout's old name is gone, with no alias (CHANGELOG.md).
  assert.throws(() => new ContextCompiler({ layout: "seed" }), { code: "INVALID_ARGUMENT", message: /"single-system" or "zoned"/ });
  // A custom processor composes built-ins.
  const compiler = new ContextCompiler({
    layout: "zoned",
    processors: [async (s, ctx, budget) => new HistorySelector({ keepFirst: 1 }).process(s, ctx, budget)],
  });
  const ctx = await compiler.compile(session, 32_000, OPTIONS);
  assert.equal(ctx.toMessages()[2].content, "The nightly job failed. Why?");
  await rejectsWithCode(() => new HistorySelector().process(session, empty, 0), "INVALID_BUDGET");
  await rejectsWithCode(() => new HistorySelector().process(session, { history: 3 }, 10), "INVALID_ARGUMENT");
  assert.ok(store);
});

test("pinned memories stay in the PERSISTENT zone, recorded once", async () => {
  const { session, store } = await agentSession();
  const memory = new InMemoryBackend();
  memory.store("disk", "The /data volume holds exports and backups", "fact");
  const compiler = new ContextCompiler({
    layout: "zoned",
    processors: [new HistorySelector({ keepFirst: 1 , keepLast: Infinity }), new MemoryPreloader(memory, { topK: 2, pin: true })],
  });
  const pinned = () => session.eventLog.events.filter((e) => e.kind === "memory_hit" && e.data.pinned === true);
  const a = await compiler.compile(session, 32_000, OPTIONS);
  const b = await compiler.compile(session, 32_000, OPTIONS);
  // After the host's goal and state digest (system), as a user message.
  assert.equal(a.toMessages()[1].role, "system");
  assert.deepEqual({ ...a.toMessages()[2], content: "" }, { role: "user", content: "" });
  assert.match(a.toMessages()[2].content, /^## Pinned memories\n- \[disk\]: The \/data volume/);
  assert.equal(b.toMessages()[2].content, a.toMessages()[2].content);
  assert.equal(pinned().length, 1);
  assert.deepEqual(b.toJSON().pinnedMemories.map((m) => m.key), ["disk"]);
  assert.deepEqual(b.memoryHits, []);
  await rejectsWithCode(() => new MemoryPreloader(memory, { pin: "yes" }), "INVALID_ARGUMENT", "pin");
  assert.ok(store);
});

test("bad compile options are clear errors", async () => {
  const { session, store } = await agentSession();
  await rejectsWithCode(() => new ContextCompiler({ layout: "columns" }), "INVALID_ARGUMENT", "layout");
  const c = pipeline(store);
  await rejectsWithCode(() => c.compile(session, 1000, { toolDefinitions: [{}] }), "INVALID_ARGUMENT", "name");
  await rejectsWithCode(() => c.compile(session, 1000, { policies: "be nice" }), "INVALID_ARGUMENT", "policies");
  await rejectsWithCode(() => c.compile(session, 1000, { stateDigest: [1] }), "INVALID_ARGUMENT", "stateDigest");
  await rejectsWithCode(() => c.compile(session, 1000, { goal: 42 }), "INVALID_ARGUMENT");
  const tight = await c.compile(session, 300, OPTIONS);
  assert.ok(tight.tokenCount <= 300);
  assert.ok(tight.toMessages().some((m) => m.content.startsWith("Clean it up")));
});
