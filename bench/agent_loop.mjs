// The tool-heavy agent loop benchmark: what a context costs on a real loop.
//
// A seeded loop (user turn, 0-3 tool calls with heavy-tailed outputs from
// 200 bytes to 80 KB, a final assistant turn) with a 2,000-token system
// prompt and a 32,000-token budget, compiled before every model call. This
// library runs the README's recommended configuration (tools through
// ToolInterruptHandler with externalisation at 4 KB, the zoned pipeline
// HistorySelector({ keepFirst: 1, keepLast: Infinity }) -> ArtifactAttacher
// -> Compactor, OpenAI format); the peer is LangChain's trimMessages
// (strategy "last") over the same messages with the same token counter.
//
// Printed per configuration: prefix reuse (share of each call's prompt
// tokens equal to the previous call's prompt prefix, whole messages), the
// input cost relative to no caching (cache reads at 0.1x, OpenAI's rule:
// cached from 1,024 tokens in steps of 128), calls over budget, calls
// missing the newest user message, calls with a tool call or result
// missing its pair, and compile p50/p95 in the first and last 50 turns
// (each timed call after a forced GC, so one side's garbage is not billed to
// the other; run with --expose-gc).
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, trimMessages } from "@langchain/core/messages";
import {
  ArtifactAttacher, Compactor, ContextCompiler, HistoryRecall, HistorySelector, MemoryArtifactStore, PerceptionAligner,
  SchemaRegistry, Session, ToolInterruptHandler, countTokens,
} from "agent-context-compiler";
import { prose, rng, toolOutput } from "./trace.mjs";

export const BUDGET = 32_000;
const OVERHEAD = 3;

/** The loop's script: per turn, a user message, tool calls, a reply. */
export function script(turns, seed) {
  const r = rng(seed);
  const size = () => Math.min(Math.floor(200 / Math.pow(1 - r(), 1 / 1.1)), 80 * 1024);
  const out = [];
  for (let t = 0; t < turns; t++) {
    const calls = [];
    const n = Math.floor(r() * 4);
    for (let i = 0; i < n; i++) {
      calls.push({ name: ["read_logs", "list_files", "read_file"][Math.floor(r() * 3)], args: { turn: t, i }, output: toolOutput(r, size()) });
    }
    out.push({
      user: `Turn ${t}: ${prose(r, 20 + Math.floor(r() * 300))}`,
      step: calls.length ? `Checking ${calls.map((c) => c.name).join(", ")}.` : null,
      calls,
      reply: prose(r, 80 + Math.floor(r() * 900)),
    });
  }
  return out;
}

export const SYSTEM = `You are a coding agent working in a large repository. ${prose(rng(7), 9_800)}`;

/** The loop's tools, sent with every request and counted in SYSTEM. */
export const TOOLS = ["read_logs", "list_files", "read_file"].map((name) => ({
  name,
  description: `The ${name.replace("_", " ")} tool of the repository`,
  parameters: { type: "object", properties: { turn: { type: "integer" }, i: { type: "integer" } } },
}));

const tokenCache = new Map();
const count = (s) => {
  let n = tokenCache.get(s);
  if (n === undefined) {
    n = countTokens(s);
    if (tokenCache.size > 20_000) tokenCache.clear();
    tokenCache.set(s, n);
  }
  return n;
};
/** An OpenAI message's tokens as both sides budget them: its text, its
 * calls' names and arguments, and the per-message overhead. */
const tokens = (m) =>
  count(m.content ?? "") + (m.tool_calls ?? []).reduce((n, c) => n + count(c.function.name) + count(c.function.arguments), 0) + OVERHEAD;

/** Running metrics over the calls of one configuration. */
class Meter {
  constructor() {
    this.prev = [];
    this.total = 0;
    this.prefix = 0;
    this.cost = 0;
    this.over = 0;
    this.missing = 0;
    this.unpaired = 0;
    this.calls = 0;
    this.ms = [];
  }
  call(turn, ms, msgs, newestUser, unpaired) {
    const strings = msgs.map((m) => JSON.stringify(m));
    const counts = msgs.map(tokens);
    const total = counts.reduce((a, b) => a + b, 0);
    let prefix = 0;
    for (let i = 0; i < strings.length && i < this.prev.length && strings[i] === this.prev[i]; i++) prefix += counts[i];
    const cached = prefix >= 1024 ? Math.floor(prefix / 128) * 128 : 0;
    this.total += total;
    this.prefix += prefix;
    this.cost += total - cached + 0.1 * cached;
    if (total > BUDGET) this.over++;
    if (!strings.some((s) => s.includes(JSON.stringify(newestUser).slice(1, -1)))) this.missing++;
    this.unpaired += unpaired;
    this.calls++;
    this.ms.push([turn, ms]);
    this.prev = strings;
  }
  latency(from, to) {
    const xs = this.ms.filter(([t]) => t >= from && t < to).map(([, ms]) => ms).sort((a, b) => a - b);
    const p = (q) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))];
    return { p50: p(0.5), p95: p(0.95) };
  }
}

/** OpenAI-format messages with a call missing its result or the reverse. */
function unpairedOpenAi(msgs) {
  const calls = new Set();
  const results = new Set();
  for (const m of msgs) {
    for (const c of m.tool_calls ?? []) calls.add(c.id);
    if (m.role === "tool") results.add(m.tool_call_id);
  }
  let n = 0;
  for (const c of calls) if (!results.has(c)) n++;
  for (const r of results) if (!calls.has(r)) n++;
  return n;
}

/** The request shapes timed per format. */
const FORMATS = ["openai", "openai-responses", "anthropic", "gemini", "ai-sdk"];

export async function runOurs(turns, seed, recall = false, formats = null) {
  const plan = script(turns, seed);
  const session = new Session();
  const store = new MemoryArtifactStore();
  let next = null;
  const handler = new ToolInterruptHandler({
    session,
    normalizer: new PerceptionAligner(new SchemaRegistry()),
    artifactStore: store,
    externalizeThreshold: 4096,
    bridge: () => next,
  });
  const compiler = new ContextCompiler({
    layout: "zoned",
    processors: [
      new HistorySelector({ keepFirst: 1, keepLast: Infinity }),
      new ArtifactAttacher(store, { thresholdBytes: 4096 }),
      new Compactor(),
      ...(recall ? [new HistoryRecall()] : []),
    ],
  });
  const meter = new Meter();
  const compile = async (t, user) => {
    globalThis.gc?.();
    const start = performance.now();
    const ctx = await compiler.compile(session, BUDGET, { systemPrompt: SYSTEM, tools: TOOLS });
    const compiled = performance.now();
    const msgs = ctx.toMessages({ format: "openai" });
    if (formats) {
      formats.compile.push(compiled - start);
      for (const format of FORMATS) {
        const from = performance.now();
        const request = ctx.toMessages({ format });
        formats.render[format].push(performance.now() - from);
        formats.bytes[format] = JSON.stringify(request).length;
      }
      // What reading the ledger costs beside the compile (issue 65: at
      // most 0.15 of its p50); it is built on this first read.
      const from = performance.now();
      const ledger = ctx.ledger;
      formats.ledger.push(performance.now() - from);
      formats.ledgerParts = Math.max(formats.ledgerParts ?? 0, ledger.included.length);
    }
    // As the README recommends: release the context's wasm memory when done.
    ctx.free();
    const ms = performance.now() - start;
    meter.call(t, ms, msgs, user, unpairedOpenAi(msgs));
  };
  for (let t = 0; t < plan.length; t++) {
    const turn = plan[t];
    session.record("user_input", { text: turn.user });
    await compile(t, turn.user);
    if (turn.calls.length) {
      session.record("assistant_output", { text: turn.step });
      for (const c of turn.calls) {
        next = c.output;
        await handler.call(c.name, c.args);
      }
      await compile(t, turn.user);
    }
    session.record("assistant_output", { text: turn.reply });
  }
  return meter;
}

async function runPeer(turns, seed) {
  const plan = script(turns, seed);
  const messages = [new SystemMessage(SYSTEM)];
  // Counted once per message object (a favourable setup for the peer).
  const counted = new WeakMap();
  const tokenCounter = (msgs) =>
    msgs.reduce((n, m) => {
      let c = counted.get(m);
      if (c === undefined) counted.set(m, (c = tokens(asOpenAi(m))));
      return n + c;
    }, 0);
  const asOpenAi = (m) => {
    const type = m._getType();
    if (type === "tool") return { role: "tool", tool_call_id: m.tool_call_id, content: m.content };
    if (type === "ai" && m.tool_calls?.length) {
      return { role: "assistant", content: m.content || null, tool_calls: m.tool_calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.args) } })) };
    }
    return { role: type === "human" ? "user" : type === "ai" ? "assistant" : "system", content: m.content };
  };
  const meter = new Meter();
  let id = 0;
  const compile = async (t, user) => {
    globalThis.gc?.();
    const start = performance.now();
    const kept = await trimMessages(messages, { maxTokens: BUDGET, strategy: "last", includeSystem: true, tokenCounter });
    const ms = performance.now() - start;
    const msgs = kept.map(asOpenAi);
    meter.call(t, ms, msgs, user, unpairedOpenAi(msgs));
  };
  for (let t = 0; t < plan.length; t++) {
    const turn = plan[t];
    messages.push(new HumanMessage(turn.user));
    await compile(t, turn.user);
    if (turn.calls.length) {
      const calls = turn.calls.map((c) => ({ id: `call_${id++}`, name: c.name, args: c.args }));
      messages.push(new AIMessage({ content: turn.step, tool_calls: calls }));
      turn.calls.forEach((c, i) => messages.push(new ToolMessage({ content: c.output, tool_call_id: calls[i].id })));
      await compile(t, turn.user);
    }
    messages.push(new AIMessage(turn.reply));
  }
  return meter;
}

const f2 = (x) => x.toFixed(2);
const ms = (x) => (x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(2) : x.toFixed(3));

/** Runs the loop at each length and prints the table. */
export async function agentLoopBench(lengths = [300, 1000], seed = 42) {
  console.log(`\ntool-heavy agent loop: ${BUDGET.toLocaleString("en")}-token budget, ${count(SYSTEM)}-token system prompt, 0-3 tool calls a turn (200 B - 80 KB), a compile before every model call (seed ${seed})`);
  console.log("  turns  configuration              calls  prefix reuse  cost vs uncached  over budget  missing newest  unpaired  p50/p95 first 50 (ms)  p50/p95 last 50 (ms)  last/first p50");
  for (const turns of lengths) {
    const withRecall = (t, s) => runOurs(t, s, true);
    for (const [name, run] of [["this library (zoned)", runOurs], ["+ HistoryRecall", withRecall], ["trimMessages (last)", runPeer]]) {
      globalThis.gc?.();
      const m = await run(turns, seed);
      const first = m.latency(0, 50);
      const last = m.latency(turns - 50, turns);
      console.log(
        `  ${String(turns).padStart(5)}  ${name.padEnd(25)} ${String(m.calls).padStart(6)}  ${f2(m.prefix / m.total).padStart(12)}  ${f2(m.cost / m.total).padStart(16)}  ${String(m.over).padStart(11)}  ${String(m.missing).padStart(14)}  ${String(m.unpaired).padStart(8)}  ${`${ms(first.p50)} / ${ms(first.p95)}`.padStart(22)}  ${`${ms(last.p50)} / ${ms(last.p95)}`.padStart(20)}  ${f2(last.p50 / first.p50).padStart(14)}`,
      );
    }
  }
}

const quantiles = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const p = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { p50: p(0.5), p95: p(0.95) };
};

/** Compile and render time per request format on the recommended loop,
 * beside the peer's whole step (trimMessages, then its messages mapped to
 * OpenAI's shape) in the same run. */
export async function formatBench(turns = 300, seed = 42) {
  const formats = { compile: [], ledger: [], render: Object.fromEntries(FORMATS.map((f) => [f, []])), bytes: {} };
  globalThis.gc?.();
  const meter = await runOurs(turns, seed, false, formats);
  globalThis.gc?.();
  const peer = await runPeer(turns, seed);
  const compile = quantiles(formats.compile);
  const peerStep = quantiles(peer.ms.map(([, x]) => x));
  console.log(`\nrequest formats on the tool-heavy loop (${turns} turns, ${meter.calls} compiles, the README's configuration, 3 tools counted in SYSTEM): compile ${ms(compile.p50)} / ${ms(compile.p95)} ms p50/p95, then each format rendered from the same context`);
  console.log("  format              render p50/p95 (ms)  compile + render p50 (ms)  vs trimMessages step p50  last request (KB)");
  for (const format of FORMATS) {
    const render = quantiles(formats.render[format]);
    const both = compile.p50 + render.p50;
    console.log(
      `  ${format.padEnd(18)}  ${`${ms(render.p50)} / ${ms(render.p95)}`.padStart(19)}  ${ms(both).padStart(25)}  ${f2(both / peerStep.p50).padStart(24)}  ${(formats.bytes[format] / 1024).toFixed(1).padStart(17)}`,
    );
  }
  console.log(`  trimMessages (last), the peer's step: ${ms(peerStep.p50)} / ${ms(peerStep.p95)} ms p50/p95 (one shape only)`);
  const ledger = quantiles(formats.ledger);
  console.log(`  ctx.ledger, built on first read (up to ${formats.ledgerParts} parts): ${ms(ledger.p50)} / ${ms(ledger.p95)} ms p50/p95, ${f2(ledger.p50 / compile.p50)} of the compile's p50 (target at most 0.15)`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const lengths = process.argv[2] ? process.argv[2].split(",").map(Number) : undefined;
  await agentLoopBench(lengths);
  await formatBench();
}
