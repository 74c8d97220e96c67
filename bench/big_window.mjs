// Issue 52, item 3: big windows and cold start, as ratios in one run.
//
// - A session that fills the window (zoned layout, `HistorySelector` only),
//   one event recorded, then compile + render the OpenAI messages: p50 over
//   50 calls at 32k, 200k and 1M budgets, beside copying the rendered text
//   once (a memcpy of its UTF-8 JSON bytes) in the same run. Targets: at most 25×
//   the copy at 200k and 15× at 1M.
// - Cold start in fresh Node processes: importing the package and the first
//   compile, beside importing LangChain and js-tiktoken and the first
//   `trimMessages` counted by js-tiktoken. Target: ours at least 35× faster.
import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import {
  ArtifactAttacher,
  Compactor,
  ContextCompiler,
  HistoryRecall,
  HistorySelector,
  MemoryArtifactStore,
  Session,
} from "agent-context-compiler";

const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x) => (x < 1 ? x.toFixed(3) : x.toFixed(2));

/** A session whose turns fill `budget` tokens (and a little more). */
function filled(budget) {
  const session = new Session({ sessionId: `window-${budget}` });
  const line = "The deploy of the billing service finished; the canary stayed green and latency held at 40 ms. ";
  let tokens = 0;
  for (let i = 0; tokens < budget * 1.1; i++) {
    const user = session.record("user_input", `question ${i}: how did step ${i} of the rollout go?`);
    const answer = session.record("assistant_output", `step ${i}: ${line.repeat(3)}`);
    tokens += user.tokenEstimate + answer.tokenEstimate;
  }
  return session;
}

/** The issue's pipeline: every turn that fits, nothing else. */
const selectorOnly = () => new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity })] });

/** The README's recommended pipeline (without memory, which this session has none of). */
const recommended = () =>
  new ContextCompiler({
    layout: "zoned",
    processors: [
      new HistorySelector({ keepFirst: 1, keepLast: Infinity }),
      new ArtifactAttacher(new MemoryArtifactStore(), { thresholdBytes: 4096 }),
      new Compactor(),
      new HistoryRecall(),
    ],
  });

/** Compile + render p50 at `budget` with the compiler `make()` makes, and copying the rendered text once. */
async function windowAt(budget, make = selectorOnly, calls = 50) {
  const session = filled(budget);
  const compiler = make();
  const options = { systemPrompt: "You are an operations assistant." };
  const times = [];
  let text = "";
  let tokens = 0;
  for (let i = 0; i < calls + 3; i++) {
    session.record("user_input", `and step ${i}?`);
    globalThis.gc?.();
    const start = performance.now();
    const ctx = await compiler.compile(session, budget, options);
    const messages = ctx.toMessages({ format: "openai" });
    const took = performance.now() - start;
    if (i >= 3) times.push(took);
    if (i === calls + 2) {
      text = JSON.stringify(messages);
      tokens = ctx.tokenCount;
    }
    ctx.free();
  }
  // Copying the rendered bytes once: the least a render could cost.
  // (Into a buffer made beforehand, 20 copies a sample: a new buffer's
  // allocation and page faults vary far more than the copy.)
  const bytes = Buffer.from(text);
  const into = new Uint8Array(bytes.length);
  const copies = [];
  for (let i = 0; i < calls; i++) {
    const start = performance.now();
    for (let k = 0; k < 20; k++) into.set(bytes);
    copies.push((performance.now() - start) / 20);
  }
  if (into[into.length - 1] !== bytes[bytes.length - 1]) throw new Error("a short copy");
  session.free?.();
  return { budget, compile: p50(times), copy: p50(copies), bytes: text.length, tokens };
}

const OURS = `
const t0 = performance.now();
const { ContextCompiler, HistorySelector, Session } = await import("agent-context-compiler");
const t1 = performance.now();
const s = new Session();
s.record("user_input", "Why did the nightly job fail?");
s.record("assistant_output", "The disk was full.");
s.record("user_input", "And now?");
const c = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector()] });
const ctx = await c.compile(s, 4000, { systemPrompt: "You are an SRE." });
ctx.toMessages({ format: "openai" });
const t2 = performance.now();
console.log(JSON.stringify({ load: t1 - t0, first: t2 - t1 }));
`;

const PEER = `
const t0 = performance.now();
const { AIMessage, HumanMessage, SystemMessage, trimMessages } = await import("@langchain/core/messages");
const { Tiktoken } = await import("js-tiktoken/lite");
const { default: ranks } = await import("js-tiktoken/ranks/o200k_base");
const t1 = performance.now();
const enc = new Tiktoken(ranks);
const tokenCounter = (ms) => ms.reduce((n, m) => n + 4 + enc.encode(typeof m.content === "string" ? m.content : JSON.stringify(m.content)).length, 0);
const messages = [new SystemMessage("You are an SRE."), new HumanMessage("Why did the nightly job fail?"), new AIMessage("The disk was full."), new HumanMessage("And now?")];
await trimMessages(messages, { maxTokens: 4000, strategy: "last", includeSystem: true, tokenCounter });
const t2 = performance.now();
console.log(JSON.stringify({ load: t1 - t0, first: t2 - t1 }));
`;

/** Median over `runs` fresh processes of the script's { load, first }. */
function fresh(script, runs = 5) {
  // Beside this file, so that the package resolves to itself.
  const file = new URL(`./.cold-${process.pid}.mjs`, import.meta.url).pathname;
  writeFileSync(file, script);
  const all = [];
  try {
    for (let i = 0; i < runs; i++) {
      const out = spawnSync(process.execPath, [file], { encoding: "utf8" });
      if (out.status !== 0) throw new Error(`cold start script failed: ${out.stderr}`);
      all.push(JSON.parse(out.stdout.trim().split("\n").at(-1)));
    }
  } finally {
    rmSync(file, { force: true });
  }
  const total = all.map((r) => r.load + r.first);
  const median = p50(total);
  return all[total.indexOf(median)];
}

export async function bigWindowBench() {
  console.log("\nbig windows (issue 52): a full zoned window, one event recorded, then compile + render OpenAI messages; p50 of 50 calls beside copying the rendered text once (a memcpy of its JSON bytes)");
  console.log("  budget     compile + render (ms)   copy (ms)   ratio   rendered (KB)   target");
  for (const [budget, target] of [[32_000, null], [200_000, 25], [1_000_000, 15]]) {
    const r = await windowAt(budget);
    const ratio = r.compile / r.copy;
    console.log(
      `  ${budget.toLocaleString("en").padEnd(9)}  ${ms(r.compile).padStart(21)}   ${ms(r.copy).padStart(9)}   ${ratio.toFixed(0).padStart(5)}×   ${(r.bytes / 1024).toFixed(0).padStart(13)}   ${target ? `≤ ${target}×` : ""}`,
    );
  }
  // What users run: the compactor folds a window over its thresholds into
  // a summary (the session is 110% of the budget), so the same sessions
  // keep far less in the window, and recall brings back what a question needs.
  console.log("  the README's recommended pipeline (selector, attacher, compactor, recall) on the same sessions: compile + render p50");
  for (const budget of [200_000, 1_000_000]) {
    const r = await windowAt(budget, recommended);
    console.log(
      `  ${budget.toLocaleString("en").padEnd(9)}  ${ms(r.compile).padStart(21)} ms, ${(r.bytes / 1024).toFixed(0)} KB rendered, ${r.tokens.toLocaleString("en")} tokens in the context`,
    );
  }
  const ours = fresh(OURS);
  const peer = fresh(PEER);
  const a = ours.load + ours.first;
  const b = peer.load + peer.first;
  console.log(`  cold start, fresh process (median of 5): this library import ${ms(ours.load)} + first compile ${ms(ours.first)} ms = ${ms(a)} ms; LangChain + js-tiktoken import ${ms(peer.load)} + first trimMessages ${ms(peer.first)} ms = ${ms(b)} ms; ${(b / a).toFixed(1)}× faster (target ≥ 35×)`);
}

if (import.meta.url === `file://${process.argv[1]}`) await bigWindowBench();
