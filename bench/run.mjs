// Benchmarks (not tests): prints this library's figures side by side with
// the peer's, measured in the same run, and the ratio between them.
//
//   npm run bench            (BENCH_CAP_S=20 limits each peer run, in seconds)
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { Worker } from "node:worker_threads";
import { AIMessage, ChatMessage, HumanMessage } from "@langchain/core/messages";
import { Session } from "agent-context-compiler";
import { generateTrace } from "./trace.mjs";

const SIZES = [1_000, 10_000, 50_000];
const TURNS = 30;
const BUDGET = 128_000;
const OVERHEAD = 3; // the default counter's per-message overhead
const SYSTEM = "You are a coding agent. Use the tools; keep answers short.";
const CAP_MS = Number(process.env.BENCH_CAP_S ?? 20) * 1000;

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3));
const record = (session, e) =>
  e.kind === "user_input"
    ? session.record("user_input", { content: e.content })
    : session.record(e.kind === "tool_output" ? "phase_result" : "assistant_output", { role: e.role, content: e.content });

const maxSize = Math.max(...SIZES);
const trace = generateTrace(maxSize + TURNS, 42);
const bytes = trace.reduce((n, e) => n + e.content.length, 0);
console.log(`trace: ${trace.length} events, ${(bytes / 1e6).toFixed(1)} MB of text (seed 42)\n`);

// 1. Recording throughput.
{
  const events = trace.slice(0, maxSize);
  const t0 = performance.now();
  const session = new Session();
  for (const e of events) record(session, e);
  const ours = events.length / ((performance.now() - t0) / 1000);
  const t1 = performance.now();
  const msgs = [];
  for (const e of events) {
    msgs.push(e.role === "user" ? new HumanMessage(e.content) : e.role === "assistant" ? new AIMessage(e.content) : new ChatMessage({ role: "tool", content: e.content }));
  }
  const peer = events.length / ((performance.now() - t1) / 1000);
  console.log("records per second (50k events)");
  console.log(`  this library  session.record (JSON-checked, token-counted, indexed): ${Math.round(ours).toLocaleString("en")}/s`);
  console.log(`  @langchain/core  new HumanMessage/AIMessage/ChatMessage (no counting): ${Math.round(peer).toLocaleString("en")}/s`);
  console.log(`  ratio (ours / peer): ${(ours / peer).toFixed(2)}\n`);
}

// 2. Per-turn compile latency.
function inWorker(script, size) {
  return new Promise((resolve) => {
    const samples = [];
    const kept = [];
    const worker = new Worker(new URL(script, import.meta.url), {
      workerData: { size, turns: TURNS, budget: BUDGET, systemPrompt: SYSTEM, overhead: OVERHEAD },
    });
    const timer = setTimeout(() => {
      worker.terminate();
      resolve({ samples, kept, capped: true });
    }, CAP_MS);
    worker.on("message", (m) => {
      if (m.done) {
        clearTimeout(timer);
        worker.terminate();
        resolve({ samples, kept, capped: false });
      } else {
        samples.push(m.ms);
        kept.push(m.kept);
      }
    });
    worker.on("error", (e) => {
      clearTimeout(timer);
      resolve({ samples, kept, capped: false, error: e.message });
    });
  });
}

console.log(`per-turn compile latency under a ${BUDGET.toLocaleString("en")}-token budget (${TURNS} turns; ms)`);
console.log("  events   this library p50 / p95   trimMessages p50 / p95                  p50 ratio       same messages kept");
for (const size of SIZES) {
  const o = await inWorker("./ours.mjs", size);
  const samples = o.samples;
  const kept = o.kept;
  const p = await inWorker("./peer_langchain.mjs", size);
  const ours = `${fmt(pct(samples, 50))} / ${fmt(pct(samples, 95))}`;
  let theirs;
  let ratio = "-";
  if (p.samples.length) {
    theirs = `${fmt(pct(p.samples, 50))} / ${fmt(pct(p.samples, 95))}${p.capped ? ` (${p.samples.length} turns in ${CAP_MS / 1000}s cap)` : ""}`;
    ratio = `${(pct(p.samples, 50) / pct(samples, 50)).toFixed(0)}x faster`;
  } else {
    theirs = p.error ? `error: ${p.error}` : `no turn finished in ${CAP_MS / 1000} s`;
    ratio = `>${(CAP_MS / pct(samples, 50)).toFixed(0)}x faster`;
  }
  const compared = p.kept.length;
  const equal = p.kept.filter((k, i) => k === kept[i]).length;
  const same = compared === 0 ? "-" : `${equal} of ${compared} turns (~${kept[0]} msgs)`;
  console.log(`  ${String(size).padStart(6)}   ${ours.padEnd(24)} ${theirs.padEnd(39)} ${ratio.padEnd(15)} ${same}`);
}
console.log("  (a window that starts with a tool or assistant turn opens here with a counted \"[conversation start]\" user message,");
console.log("   as the providers ask: on such a turn one message fewer may fit)\n");

// 2b. importJson of a 100,000-event export: cold (a fresh instance) and warm.
{
  const events = trace.slice(0, 50_000);
  const source = new Session({ sessionId: "import" });
  for (const e of events.concat(events)) record(source, e);
  const json = source.exportJson();
  source.free();
  const r = await new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./import.mjs", import.meta.url), { workerData: { json } });
    worker.once("message", (m) => {
      worker.terminate();
      resolve(m);
    });
    worker.once("error", reject);
  });
  console.log(`\nimportJson of a 100,000-event export (${(json.length / 1e6).toFixed(1)} MB; ms)`);
  console.log(`  this library  cold (fresh instance): ${fmt(r.cold)}   warm: ${fmt(r.warm)}   cold / warm: ${(r.cold / r.warm).toFixed(2)}`);
  console.log(`  JSON.parse of the same text (no validation, no counting, no indices): ${fmt(r.parse)}   import / parse (warm): ${(r.warm / r.parse).toFixed(2)}`);
  // Cold imports at 10^5 and 10^6 short turns, each in a fresh instance: a
  // stored session loaded at start-up (issue 33: once quadratic, 400k events
  // took 25 s). Linear: the second takes about ten times the first.
  const cold = [];
  for (const n of [100_000, 1_000_000]) {
    const s = new Session({ sessionId: "cold" });
    for (let i = 0; i < n; i++) s.record(i % 2 ? "assistant_output" : "user_input", `message ${i} about the nightly job`);
    const doc = s.exportJson();
    s.free();
    const m = await new Promise((resolve, reject) => {
      const worker = new Worker(new URL("./import.mjs", import.meta.url), { workerData: { json: doc, coldOnly: true } });
      worker.once("message", (msg) => {
        worker.terminate();
        resolve(msg);
      });
      worker.once("error", reject);
    });
    cold.push(m.cold);
    console.log(`  cold importJson of ${n.toLocaleString("en")} short turns (${(doc.length / 1e6).toFixed(0)} MB): ${fmt(m.cold)}   JSON.parse: ${fmt(m.parse)}`);
  }
  console.log(`  10^6 / 10^5 cold: ${(cold[1] / cold[0]).toFixed(1)}× (10× is linear)`);
}

// 3. Size.
const wasm = readFileSync(new URL("../pkg/context_compiler_bg.wasm", import.meta.url));
console.log(`\nwasm size: ${wasm.length.toLocaleString("en")} bytes, ${gzipSync(wasm, { level: 9 }).length.toLocaleString("en")} gzipped`);
const { sizeProfile } = await import("./size_profile.mjs");
sizeProfile();
for (const [world, file] of [["context-compiler", "context_compiler_component"], ["context-compiler-runner", "context_compiler_runner"]]) {
  const component = readFileSync(new URL(`../target/wasm32-wasip2/release/${file}.wasm`, import.meta.url));
  console.log(`component size (wasm32-wasip2, ${world}): ${component.length.toLocaleString("en")} bytes, ${gzipSync(component, { level: 9 }).length.toLocaleString("en")} gzipped`);
}

// 4. Storage.
const { storageBench } = await import("./storage.mjs");
await storageBench();

// 4b. Many workers, one session: PostgreSQL and Redis beside LangGraph's PostgresSaver.
const { sharedSessionsBench } = await import("./shared_sessions.mjs");
await sharedSessionsBench();
const { syncContentionBench } = await import("./sync_contention.mjs");
await syncContentionBench();

// 5. The tool-heavy agent loop: prompt-cache reuse, cost, budget, latency.
const { agentLoopBench, formatBench } = await import("./agent_loop.mjs");
await agentLoopBench();
await formatBench();

// 5-. Big windows and cold start (issue 52): ratios in one run.
const { bigWindowBench } = await import("./big_window.mjs");
await bigWindowBench();

// 5a. LangChain createAgent: this library's middleware beside LangChain's own.
const { langchainMiddlewareBench } = await import("./langchain_middleware.mjs");
await langchainMiddlewareBench();

// 5a'. The integrations through each framework's provider code (issue 61).
const { integrationsBench } = await import("./integrations.mjs");
await integrationsBench();

// 5a'''. The Python package beside the npm package and LangChain Python (issue 66).
const { pythonBench } = await import("./python.mjs");
await pythonBench();

// 5a''. The default counter against o200k and cl100k per kind of content (issue 62).
const { counterErrorBench } = await import("./counter_error.mjs");
counterErrorBench();

// 5b. Recall on long conversations: what the context holds.
const { recallBench, searchBench } = await import("./recall.mjs");
await recallBench();
// Real conversations: LoCoMo's development half, when it is beside the project.
const { locomoBench } = await import("./locomo.mjs");
await locomoBench();
searchBench();

// 6. The event bus beside EventEmitter and emittery; the turn runner's overhead.
const { busBench } = await import("./bus.mjs");
await busBench();

// 7. Issue 12's table: recording, counting, hashing, redaction and size, in
// a process of its own, as a new user measures it: by now this one holds
// the sections above's sessions, traces and grown wasm memories, and their
// garbage would be collected during its timings.
const perf = spawnSync(process.execPath, ["--expose-gc", new URL("./perf.mjs", import.meta.url).pathname], { stdio: "inherit" });
if (perf.status !== 0) throw new Error(`bench/perf.mjs exited with ${perf.status ?? perf.signal}`);
