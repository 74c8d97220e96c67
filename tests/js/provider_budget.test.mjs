// Budgets in the provider's tokens (issue 36, item 3): the tools a request
// offers are counted in SYSTEM as the format sends them, `reserveOutput`
// keeps room for the reply, and the usage the provider reports corrects the
// session's count, tested with a scripted model whose tokenizer (js-tiktoken,
// OpenAI's own ranks) is not the session's counter.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Tiktoken } from "js-tiktoken/lite";
import o200kRanks from "js-tiktoken/ranks/o200k_base";
import cl100kRanks from "js-tiktoken/ranks/cl100k_base";
import { Compactor, ContextCompiler, HistorySelector, MemoryArtifactStore, Session, runCompiled } from "agent-context-compiler";
import { loadTokenizer } from "agent-context-compiler/tokenizers";
import { rejectsWithCode } from "./helpers.mjs";

const o200k = new Tiktoken(o200kRanks);
const cl100k = new Tiktoken(cl100kRanks);

/** Forty tools of ordinary size: a description and three typed arguments. */
const fortyTools = Array.from({ length: 40 }, (_, i) => ({
  name: `tool_${i}`,
  description: `Looks up record kind ${i} in the inventory service and returns its fields`,
  parameters: {
    type: "object",
    properties: {
      id: { type: "string", description: "The record's id" },
      fields: { type: "array", items: { type: "string" } },
      limit: { type: "integer", minimum: 1, maximum: 100 },
    },
    required: ["id"],
  },
}));
const openAiTools = fortyTools.map(({ name, description, parameters }) => ({ type: "function", function: { name, description, parameters } }));

const zoned = () => new ContextCompiler({
  layout: "zoned",
  processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity }), new Compactor()],
});

function longSession(turns, options) {
  const session = new Session(options);
  for (let i = 0; i < turns; i++) {
    session.record("user_input", { text: `Question ${i}: how is shipment S-${i * 7919} doing after the storm near depot D-${i % 13}?` });
    session.record("assistant_output", { text: `Shipment S-${i * 7919} left depot D-${i % 13} at ${i % 24}:00 and is on time. `.repeat(6) });
  }
  return session;
}

/** The request's tokens under `enc`: each message's text and 4, and the tools as JSON. */
function requestTokens(enc, messages, tools) {
  const text = (c) => (typeof c === "string" ? c : JSON.stringify(c ?? ""));
  let n = 0;
  for (const m of messages) n += enc.encode(text(m.content) + (m.tool_calls ? JSON.stringify(m.tool_calls) : "")).length + 4;
  return n + (tools?.length ? enc.encode(JSON.stringify(tools)).length : 0);
}

/** A compiler whose history fills what the budget leaves (no compaction). */
const filling = () => new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity })] });

test("forty tools at a 16,000-token budget: the request, tools included, is within 16,000 o200k tokens", async () => {
  const tokenCounter = await loadTokenizer("o200k_base");
  const session = longSession(300, { tokenCounter });
  const ctx = await filling().compile(session, 16_000, { systemPrompt: "You are a logistics assistant.", tools: fortyTools, format: "openai" });
  assert.ok(ctx.toolTokens > 2_000, `forty tools cost ${ctx.toolTokens}`);
  assert.equal(ctx.toolTokens, o200k.encode(JSON.stringify(openAiTools)).length, "counted as Chat Completions sends them");
  assert.ok(ctx.zoneUsage.system > ctx.toolTokens, "in SYSTEM");
  const request = requestTokens(o200k, ctx.toMessages({ format: "openai" }), openAiTools);
  assert.ok(request <= 16_000, `the request is ${request} tokens`);
  assert.ok(ctx.tokenCount <= 16_000);
  // Without them the same compile makes a request over the budget.
  const blind = await filling().compile(session, 16_000, { systemPrompt: "You are a logistics assistant." });
  const over = requestTokens(o200k, blind.toMessages({ format: "openai" }), openAiTools);
  assert.ok(over > 16_000, `uncounted tools make a ${over}-token request`);
  // Listed tool definitions are counted when no tools are given.
  const listed = await zoned().compile(session, 16_000, { toolDefinitions: fortyTools });
  assert.ok(listed.toolTokens > 2_000);
});

test("reserveOutput keeps room for the reply; budgetPlan says how the budget was spent", async () => {
  const session = longSession(200);
  const ctx = await zoned().compile(session, 8_000, { reserveOutput: 2_000 });
  // Before any usage, the default counter's margin for text (6,000 / 1.17).
  assert.deepEqual(ctx.budgetPlan, { requested: 8_000, reserveOutput: 2_000, correction: 1, usageSamples: 0, margin: 0, contentMargin: 872, rejectedUsage: 0, target: 5_128 });
  assert.equal(ctx.budget, 5_128);
  assert.ok(ctx.tokenCount <= 5_128);
  await rejectsWithCode(() => zoned().compile(session, 8_000, { reserveOutput: 8_000 }), "INVALID_BUDGET", "reserveOutput");
  await rejectsWithCode(() => zoned().compile(session, 8_000, { reserveOutput: -1 }), "INVALID_BUDGET");
  await rejectsWithCode(() => zoned().compile(session, 8_000, { usageMargin: 1.5 }), "INVALID_ARGUMENT", "usageMargin");
  await rejectsWithCode(() => zoned().compile(session, 8_000, { format: "bard" }), "INVALID_ARGUMENT");
  await rejectsWithCode(() => zoned().compile(session, 8_000, { tools: [{ description: "no name" }] }), "INVALID_ARGUMENT");
});

test("session.recordUsage reads every provider's usage and answers the latest compile", async () => {
  const session = longSession(20);
  const ctx = await zoned().compile(session, 4_000);
  const shapes = [
    [{ inputTokens: 1000, cachedInputTokens: 400, outputTokens: 7 }, 1000, 400],
    [{ prompt_tokens: 1000, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 400 } }, 1000, 400],
    [{ input_tokens: 1000, output_tokens: 7, input_tokens_details: { cached_tokens: 400 } }, 1000, 400],
    [{ input_tokens: 500, cache_creation_input_tokens: 100, cache_read_input_tokens: 400, output_tokens: 7 }, 1000, 400],
    [{ promptTokenCount: 1000, cachedContentTokenCount: 400, candidatesTokenCount: 7 }, 1000, 400],
    // The AI SDK's provider usage (a middleware's) and ai 7's result usage.
    [{ inputTokens: { total: 1000, noCache: 600, cacheRead: 400, cacheWrite: 0 }, outputTokens: { total: 7, text: 7, reasoning: undefined } }, 1000, 400],
    [{ inputTokens: 1000, outputTokens: 7, totalTokens: 1007, inputTokenDetails: { noCacheTokens: 600, cacheReadTokens: 400, cacheWriteTokens: 0 } }, 1000, 400],
    // LangChain's usage_metadata, alone and on its message.
    [{ input_tokens: 1000, output_tokens: 7, total_tokens: 1007, input_token_details: { cache_read: 400 } }, 1000, 400],
    [{ content: "ok", usage_metadata: { input_tokens: 1000, output_tokens: 7, total_tokens: 1007, input_token_details: { cache_read: 400 } } }, 1000, 400],
    // The OpenAI Agents SDK's Usage: details per request.
    [{ requests: 2, inputTokens: 1000, outputTokens: 7, totalTokens: 1007, inputTokensDetails: [{ cached_tokens: 300 }, { cached_tokens: 100 }] }, 1000, 400],
  ];
  for (const [usage, input, cached] of shapes) {
    const event = session.recordUsage(usage);
    assert.equal(event.kind, "model_usage");
    assert.deepEqual(event.data, { inputTokens: input, cachedInputTokens: cached, outputTokens: 7, countedTokens: ctx.tokenCount }, JSON.stringify(usage));
  }
  assert.equal(session.recordUsage({ inputTokens: 10 }, { countedTokens: 9 }).data.countedTokens, 9);
  for (const bad of [null, 3, {}, { outputTokens: 3 }]) {
    await rejectsWithCode(() => session.recordUsage(bad), "INVALID_ARGUMENT");
  }
  const before = session.eventLog.length;
  // A count that is not a non-negative safe integer is a bad token count,
  // never stored clamped (1e300 was once recorded as 2^64 - 1).
  for (const bad of [
    { inputTokens: -1 },
    { inputTokens: "many" },
    { prompt_tokens: 1.5 },
    { inputTokens: 1e300 },
    { inputTokens: 2 ** 53 },
    { inputTokens: Infinity },
    { inputTokens: NaN },
    { inputTokens: 10, outputTokens: 1e300 },
    { prompt_tokens: 10, prompt_tokens_details: { cached_tokens: 1e20 } },
    { input_tokens: Number.MAX_SAFE_INTEGER, cache_read_input_tokens: 5 },
  ]) {
    await rejectsWithCode(() => session.recordUsage(bad), "INVALID_TOKEN_COUNT");
  }
  for (const counted of [-2, 1e300, 2 ** 53, 0.5, "9"]) {
    await rejectsWithCode(() => session.recordUsage({ inputTokens: 1 }, { countedTokens: counted }), "INVALID_TOKEN_COUNT");
  }
  assert.equal(session.eventLog.length, before, "nothing recorded for refused usage");
  assert.equal(session.recordUsage({ inputTokens: Number.MAX_SAFE_INTEGER }, { countedTokens: Number.MAX_SAFE_INTEGER }).data.inputTokens, Number.MAX_SAFE_INTEGER);
  const next = await zoned().compile(session, 4_000);
  assert.equal(next.budgetPlan.usageSamples, 12);
  assert.ok(next.toMessages().every((m) => !m.content.includes("inputTokens")), "usage events render into no context");
});

test("a scripted model reporting cl100k usage: from its second call on, every request is within budget in its tokens", async () => {
  const budget = 3_000;
  const reserveOutput = 300;
  const requests = [];
  const rows = (id) => JSON.stringify(Array.from({ length: 14 }, (_, i) => ({ depot: `D-${i}`, sha: `${id}${i}`.padEnd(16, "f0e1"), eta: `2026-11-${String(1 + (i % 28)).padStart(2, "0")}T0${i % 10}:00Z`, ok: i % 5 !== 0 })));
  const model = (messages, { tools, step }) => {
    const input = requestTokens(cl100k, messages, tools);
    requests.push(input);
    const usage = { prompt_tokens: input, completion_tokens: 20 };
    return step === 0
      ? { content: null, tool_calls: [{ id: `c${requests.length}`, function: { name: "inventory", arguments: '{"id":"A-7"}' } }], usage }
      : { content: "Shipment A-7 is on time; the storm delayed nothing.", usage };
  };
  // The session estimates (a character count, as one would for a provider
  // without a public tokenizer); the provider counts with cl100k.
  const tokenCounter = { count: (t) => Math.ceil(t.length / 5), messageOverhead: 3 };
  const session = new Session({ tokenCounter });
  const options = {
    budget, reserveOutput, session, model, format: "openai", compiler: filling(),
    systemPrompt: "You are a logistics assistant. Answer briefly.",
    tools: [...fortyTools.slice(0, 6), { name: "inventory", description: "Reads a shipment's rows" }],
    bridge: (_name, args) => rows(args.id),
  };
  for (let turn = 0; turn < 30; turn++) {
    await runCompiled(`Turn ${turn}: where is shipment A-7 now, and which depots (D-1, D-2, D-3) are late? `.repeat(3), options);
  }
  assert.equal(requests.length, 60);
  for (const [i, n] of requests.entries()) {
    if (i > 0) assert.ok(n <= budget - reserveOutput, `request ${i}: ${n} cl100k tokens`);
  }
  // The correction does not waste the budget: the history fills what the
  // margin leaves, in the provider's tokens, to a turn (a turn here is a
  // question, a call and 14 rows).
  assert.ok(requests.at(-1) >= 0.75 * (budget - reserveOutput), `the last request is ${requests.at(-1)}`);
  const usage = session.eventLog.filter(["model_usage"]);
  assert.equal(usage.length, 60);
  assert.ok(usage.every((e) => e.data.countedTokens > 0 && e.data.inputTokens > 0));
  // A reloaded session compiles the same: the correction comes from its events.
  const reloaded = Session.importJson(session.exportJson(), { tokenCounter });
  const compileOptions = { reserveOutput, tools: options.tools, format: "openai", systemPrompt: options.systemPrompt };
  const a = await filling().compile(session, budget, compileOptions);
  const b = await filling().compile(reloaded, budget, compileOptions);
  assert.deepEqual(a.budgetPlan, b.budgetPlan);
  assert.deepEqual(a.toMessages(), b.toMessages());
  assert.equal(a.budgetPlan.usageSamples, 60);
  // Uncorrected, the requests would have been a quarter and more over.
  assert.ok(a.budgetPlan.correction > 1.25, `correction ${a.budgetPlan.correction}`);
  assert.equal(a.budgetPlan.margin, Math.ceil((budget - reserveOutput) * 0.05));
});

/** A JSON listing of `rows` records, as an inventory API returns it (pretty-printed). */
function inventory(seed, rows) {
  let s = seed;
  const next = () => ((s = (s * 1103515245 + 12345) % 2 ** 31), s);
  const items = Array.from({ length: rows }, (_, i) => ({
    id: `rec-${seed}-${i}`,
    sku: next().toString(36).toUpperCase(),
    name: ["bolt", "washer", "bracket", "hinge", "spring"][next() % 5] + ` ${next() % 900}`,
    qty: next() % 5000,
    price: (next() % 100000) / 100,
    updated: new Date(1_700_000_000_000 + (next() % 1e10)).toISOString(),
    tags: ["a", "b", "c"].slice(0, next() % 4),
  }));
  return JSON.stringify({ total: rows, items }, null, 2);
}

test("a runCompiled loop with the look-back tools counted by the default counter: no request over an 8,000 budget in o200k or cl100k before any usage", async () => {
  const budget = 8_000;
  const over = [];
  let calls = 0;
  let reading = null;
  let reads = 0;
  const model = (messages, { tools }) => {
    calls++;
    for (const [name, enc] of [["o200k", o200k], ["cl100k", cl100k]]) {
      const n = requestTokens(enc, messages, tools);
      if (n > budget) over.push(`${name} call ${calls}: ${n}`);
    }
    // This turn's question, and the tool results after it.
    const asked = messages.findLastIndex((m) => m.role === "user" && /^Turn \d+:/.test(m.content));
    const turn = /^Turn (\d+):/.exec(messages[asked].content)[1];
    const last = messages.slice(asked + 1).findLast((m) => m.role === "tool");
    if (last === undefined) return { toolCalls: [{ id: `q${turn}`, name: "list_inventory", arguments: { turn: Number(turn) } }] };
    const smaller = /read it again with a length of at most (\d+)/.exec(last.content);
    const handle = /\b([0-9a-f]{64})\b/.exec(last.content)?.[1];
    if (smaller !== null) return { toolCalls: [{ id: `s${calls}`, name: "read_artifact", arguments: { handle: reading.handle, offset: reading.offset, length: Number(smaller[1]) } }] };
    if (last.content.startsWith('{"handle"')) {
      const page = JSON.parse(last.content);
      reads++;
      if (page.nextOffset === null) return `Turn ${turn}: read.`;
      reading = { handle: page.handle, offset: page.nextOffset };
      return { toolCalls: [{ id: `p${turn}_${page.nextOffset}`, name: "read_artifact", arguments: { ...reading, length: 8192 } }] };
    }
    if (handle) {
      reading = { handle, offset: 0 };
      return { toolCalls: [{ id: `p${turn}_0`, name: "read_artifact", arguments: { ...reading, length: 8192 } }] };
    }
    return `Turn ${turn}: read.`;
  };
  const session = new Session();
  const store = new MemoryArtifactStore();
  const tools = [{ name: "list_inventory", description: "Lists the inventory's records as JSON", parameters: { type: "object", properties: { turn: { type: "integer" } } } }];
  for (let turn = 1; turn <= 12; turn++) {
    await runCompiled(`Turn ${turn}: which records of batch ${turn} are low on stock?`, {
      session, budget, model, tools, artifactStore: store, maxSteps: 20, systemPrompt: "You are an inventory assistant.",
      bridge: (_name, args) => inventory(args.turn, 150 + 60 * (args.turn % 4)),
    });
  }
  assert.ok(calls >= 70, `${calls} calls`);
  assert.ok(reads >= 50, `${reads} pages read`);
  assert.deepEqual(over, []);
  const ctx = await new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity })] }).compile(session, budget);
  assert.ok(ctx.budgetPlan.contentMargin > 0.1 * budget, JSON.stringify(ctx.budgetPlan));
  assert.equal(ctx.budgetPlan.usageSamples, 0);
  session.free();
});

test("a usage report the counter's error does not explain is kept but not applied, and budgetPlan says so", async () => {
  // Far above the count: today a correction of 4 (the context a quarter).
  const high = longSession(200);
  const first = await filling().compile(high, 8_000);
  assert.ok(first.tokenCount > 5_000);
  high.recordUsage({ inputTokens: 100_000 });
  const after = await filling().compile(high, 8_000);
  assert.equal(after.budgetPlan.correction, 1, JSON.stringify(after.budgetPlan));
  assert.equal(after.budgetPlan.rejectedUsage, 1);
  assert.equal(after.budgetPlan.usageSamples, 0);
  assert.ok(after.tokenCount >= first.tokenCount, `${after.tokenCount} after, ${first.tokenCount} before`);
  assert.equal(high.eventLog.filter(["model_usage"]).length, 1, "the report stays as usage");

  // Far below (10 input tokens for thousands): not a correction either, so
  // it neither lifts later compiles nor drops the content margin.
  const low = longSession(200);
  const before = await filling().compile(low, 6_000);
  low.recordUsage({ inputTokens: 10 });
  for (let i = 0; i < 5; i++) {
    const ctx = await filling().compile(low, 6_000);
    assert.ok(ctx.tokenCount <= 6_000, `${ctx.tokenCount}`);
    assert.equal(ctx.budgetPlan.usageSamples, 0);
    assert.equal(ctx.budgetPlan.contentMargin, before.budgetPlan.contentMargin);
    assert.equal(ctx.budgetPlan.rejectedUsage, 1);
    assert.ok(requestTokens(o200k, ctx.toMessages({ format: "openai" })) <= 6_000);
  }
  // A report the error explains (o200k's count of the request) is applied.
  const ctx = await filling().compile(low, 6_000);
  low.recordUsage({ inputTokens: requestTokens(cl100k, ctx.toMessages({ format: "openai" })) });
  const corrected = await filling().compile(low, 6_000);
  assert.equal(corrected.budgetPlan.usageSamples, 1);
  assert.equal(corrected.budgetPlan.contentMargin, 0);
  assert.equal(corrected.budgetPlan.rejectedUsage, 1);
  high.free();
  low.free();

  // A model (a test double) reporting 10 input tokens on every reply of a
  // runCompiled loop: each report is kept, none applied.
  const session = longSession(200);
  const model = () => ({ content: "ok", usage: { prompt_tokens: 10, completion_tokens: 2 } });
  for (let turn = 0; turn < 5; turn++) await runCompiled(`Turn ${turn}: and now?`, { session, budget: 6_000, model, compiler: filling() });
  const plan = (await filling().compile(session, 6_000)).budgetPlan;
  assert.deepEqual([plan.usageSamples, plan.rejectedUsage, plan.correction], [0, 5, 1]);
  assert.ok(plan.contentMargin > 0);
  assert.equal(session.eventLog.filter(["model_usage"]).length, 5);
  session.free();
});
