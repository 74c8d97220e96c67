// HistoryRecall from JS: an evicted turn comes back in the RECENT tail,
// within the budget; bad options are INVALID_ARGUMENT.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Compactor, ContextCompiler, HistoryRecall, HistorySelector, MemoryArtifactStore, Session } from "agent-context-compiler";

// As recommended: the Compactor keeps the window below the budget, and
// recall takes (part of) the room it leaves. The conversation is compiled
// every 10 events, as a live loop does.
const pipeline = (recall) =>
  new ContextCompiler({
    layout: "zoned",
    processors: [new HistorySelector({ keepFirst: 0, keepLast: Infinity }), new Compactor(), ...(recall ? [new HistoryRecall()] : [])],
  });

async function conversation(budget = 1500) {
  const s = new Session({ sessionId: "recall" });
  s.record("user_input", { content: "My passport number ends in 4471 and it expires in June 2031." });
  s.record("assistant_output", { content: "Noted, the passport expires in June 2031." });
  const live = pipeline(false);
  for (let i = 0; i < 150; i++) {
    s.record("user_input", { content: `Small talk number ${i} about the weather and the weekend.` });
    s.record("assistant_output", { content: `Reply ${i}: a few ordinary sentences about nothing much, to fill the window.` });
    if (i % 5 === 4) (await live.compile(s, budget, { systemPrompt: "You are helpful." })).free();
  }
  s.record("user_input", { content: "When does my passport expire?" });
  return s;
}

test("an evicted turn is recalled into the tail, within the budget", async () => {
  const s = await conversation();
  const ctx = await pipeline(true).compile(s, 1500, { systemPrompt: "You are helpful." });
  assert.ok(ctx.tokenCount <= 1500);
  const messages = ctx.toMessages({ format: "openai" });
  const tail = messages.at(-1).content;
  assert.match(tail, /## Recalled from earlier in this conversation/);
  assert.match(tail, /4471/);
  assert.match(tail, /\[\d{4}-\d\d-\d\d \d\d:\d\d UTC\]\n- user:/);
  assert.equal(new HistoryRecall().name, "history_recall");
  ctx.free();
  s.free();
});

test("a message pointing at nothing in particular recalls nothing unless minDistinction is 0", async () => {
  // (1,755 less the default counter's content margin is 1,500: at a
  // target of 1,282 the compaction's boundaries leave a small-talk turn
  // distinct enough to recall, before issue 62 as after.)
  const s = await conversation(1755);
  s.record("user_input", { content: "Some small talk about the weather and the weekend, please." });
  const quiet = await pipeline(true).compile(s, 1755, { systemPrompt: "You are helpful." });
  assert.deepEqual(quiet.recalled, []);
  quiet.free();
  const eager = new ContextCompiler({
    layout: "zoned",
    processors: [new HistorySelector({ keepFirst: 0, keepLast: Infinity }), new Compactor(), new HistoryRecall({ minDistinction: 0 })],
  });
  const ctx = await eager.compile(s, 1755, { systemPrompt: "You are helpful." });
  assert.ok(ctx.recalled.length > 0);
  ctx.free();
  const [hit] = s.search("When does my passport expire?", { limit: 1 });
  assert.ok(hit.distinction >= 4, JSON.stringify(hit));
  s.free();
});

test("HistoryRecall's options are checked", () => {
  for (const options of [{ share: 2 }, { share: -0.1 }, { share: "half" }, { matches: -1 }, { neighbours: 1.5 }, { turnTokens: "x" }, { minDistinction: -1 }, { minDistinction: "high" }, [1], 7]) {
    assert.throws(() => new HistoryRecall(options), { code: "INVALID_ARGUMENT" }, JSON.stringify(options));
  }
  new HistoryRecall({ share: 0.25, matches: 3, neighbours: 0, turnTokens: 100, minDistinction: 0 }).free();
});

// One dimension per group of words meaning the same: "travel document"
// and "passport" are near, and share no word.
const GROUPS = [["passport", "travel document", "visa"], ["expire", "valid until", "runs out"], ["weather", "weekend"]];
const synonyms = (calls) => async (texts) => {
  calls.push(texts.length);
  return texts.map((t) => [...GROUPS.map((g) => g.filter((w) => t.toLowerCase().includes(w)).length), 0.1]);
};

test("an embedder recalls a paraphrased question; one that fails or answers badly leaves recall lexical", async () => {
  const s = await conversation();
  s.record("user_input", { content: "Travel document: valid until which month?" });
  const calls = [];
  const withEmbedder = (embedder) =>
    new ContextCompiler({
      layout: "zoned",
      processors: [new HistorySelector({ keepFirst: 0, keepLast: Infinity }), new Compactor(), new HistoryRecall({ embedder })],
    });
  const lexical = await pipeline(true).compile(s, 1500, { systemPrompt: "You are helpful." });
  const lexicalIds = lexical.recalled.map((r) => r.eventId);
  assert.doesNotMatch(lexical.toMessages().at(-1).content, /4471/, "no word in common");
  lexical.free();
  const compiler = withEmbedder(synonyms(calls));
  const ctx = await compiler.compile(s, 1500, { systemPrompt: "You are helpful." });
  assert.ok(ctx.tokenCount <= 1500);
  assert.match(ctx.toMessages().at(-1).content, /4471/);
  const embedded = calls.reduce((a, b) => a + b, 0);
  ctx.free();
  (await compiler.compile(s, 1500, { systemPrompt: "You are helpful." })).free();
  assert.ok(calls.reduce((a, b) => a + b, 0) - embedded <= 2, "each text embedded once");
  assert.ok(Math.max(...calls) <= 64, "in batches of 64");
  for (const bad of [
    async () => { throw new Error("the embedding service is down"); },
    async () => "not vectors",
    async (texts) => texts.map(() => [Number.NaN]),
    { embed: async (texts) => texts.map(() => new Float32Array([1, 0])).slice(1) },
    // `new Float32Array` throws on BigInt elements: it poisoned the module.
    async (texts) => texts.map(() => new BigInt64Array([1n, 0n])),
  ]) {
    const c = await withEmbedder(bad).compile(s, 1500, { systemPrompt: "You are helpful." });
    assert.deepEqual(c.recalled.map((r) => r.eventId), lexicalIds);
    c.free();
  }
  assert.throws(() => new HistoryRecall({ embedder: 42 }), { code: "INVALID_ARGUMENT" });
  s.free();
});

test("an embedder that never answers leaves recall lexical after embedderTimeoutMs", async () => {
  const s = await conversation();
  s.record("user_input", { content: "Travel document: valid until which month?" });
  const processors = (recall) => [new HistorySelector({ keepFirst: 0, keepLast: Infinity }), new Compactor(), recall];
  const lexical = await pipeline(true).compile(s, 1500, { systemPrompt: "You are helpful." });
  const lexicalIds = lexical.recalled.map((r) => r.eventId);
  lexical.free();
  const never = () => new Promise(() => {});
  const compiler = new ContextCompiler({ layout: "zoned", processors: processors(new HistoryRecall({ embedder: never, embedderTimeoutMs: 50 })) });
  const started = Date.now();
  const ctx = await compiler.compile(s, 1500, { systemPrompt: "You are helpful." });
  assert.ok(Date.now() - started < 5000, `${Date.now() - started} ms`);
  assert.deepEqual(ctx.recalled.map((r) => r.eventId), lexicalIds);
  assert.ok(ctx.tokenCount <= 1500);
  ctx.free();
  for (const embedderTimeoutMs of [-1, "soon", Number.NaN]) {
    assert.throws(() => new HistoryRecall({ embedder: never, embedderTimeoutMs }), { code: "INVALID_ARGUMENT" }, String(embedderTimeoutMs));
  }
  s.free();
});

test("the embedder is told each batch's role; batches running at a compile's timeout are kept, two at once, and not asked for again", async () => {
  const s = await conversation();
  s.record("user_input", { content: "Travel document: valid until which month?" });
  const events = s.eventLog.length;
  const calls = [];
  let running = 0;
  let most = 0;
  const seen = new Set();
  const twice = [];
  // 250 ms a batch: the first compiles give up after 200 ms (a batch is
  // given up after three timeouts, 600 ms).
  const slow = async (texts, options) => {
    calls.push({ role: options.role, n: texts.length });
    for (const t of texts) {
      if (seen.has(`${options.role}:${t}`)) twice.push(t);
      seen.add(`${options.role}:${t}`);
    }
    running++;
    most = Math.max(most, running);
    await new Promise((resolve) => setTimeout(resolve, 250));
    running--;
    return synonyms([])(texts);
  };
  const compiler = new ContextCompiler({
    layout: "zoned",
    processors: [new HistorySelector({ keepFirst: 0, keepLast: Infinity }), new Compactor(), new HistoryRecall({ embedder: slow, embedderTimeoutMs: 200 })],
  });
  let semantic = null;
  for (let i = 0; i < 20 && !semantic; i++) {
    const ctx = await compiler.compile(s, 1500, { systemPrompt: "You are helpful." });
    if (/4471/.test(ctx.toMessages().at(-1).content)) semantic = i;
    ctx.free();
  }
  assert.ok(semantic > 0, `recalled by meaning at compile ${semantic}, after lexical ones`);
  assert.deepEqual(calls[0], { role: "query", n: 1 }, "the question first, alone");
  assert.ok(calls.slice(1).every((c) => c.role === "passage"));
  const passages = calls.filter((c) => c.role === "passage").reduce((n, c) => n + c.n, 0);
  assert.ok(passages <= events, `${passages} turns asked for, the session holds ${events}`);
  assert.deepEqual(twice, [], "no text asked for twice");
  assert.equal(most, 2, "two batches at once");
  s.free();
});

test("with artifactStore, an output stored away is recalled by a part its summary does not show", async () => {
  const store = new MemoryArtifactStore();
  const log = Array.from({ length: 400 }, (_, i) => `line ${i}: request served in ${i % 7} ms`).join("\n");
  const stored = await store.store(log, "tool:logs", { mimeType: "text/plain" });
  const s = new Session({ sessionId: "stored" });
  s.record("user_input", { content: "Fetch the server logs." });
  s.record("tool_call", { tool_name: "logs", call_id: "c1", arguments: {} });
  s.record("tool_success", { tool: "logs", call_id: "c1", summary: "server output, 400 records", handle: stored.artifactId, size_bytes: stored.sizeBytes });
  for (let i = 0; i < 120; i++) {
    s.record("user_input", { content: `Small talk number ${i} about the weather.` });
    s.record("assistant_output", { content: `Reply ${i}: ordinary sentences about nothing much.` });
  }
  s.record("user_input", { content: "What was served at line 377?" });
  const compile = async (recall) => {
    const ctx = await new ContextCompiler({
      layout: "zoned",
      processors: [new HistorySelector({ keepFirst: 0, keepLast: Infinity }), new Compactor(), recall],
    }).compile(s, 1500, { systemPrompt: "You are helpful." });
    const ids = ctx.recalled.map((r) => r.eventId);
    assert.ok(ctx.tokenCount <= 1500);
    ctx.free();
    return ids;
  };
  const outcome = s.eventLog.events[2].eventId;
  assert.ok(!(await compile(new HistoryRecall())).includes(outcome), "the summary alone does not match");
  assert.ok((await compile(new HistoryRecall({ artifactStore: store }))).includes(outcome));
  s.free();
});
