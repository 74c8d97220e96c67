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
//   The same import and first compile in fresh Deno processes, and on workerd
//   from outside (a worker's timers are frozen): a worker using the package
//   against an empty one, from starting workerd to listening and to the first
//   response.
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
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
export const recommended = () =>
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
export async function windowAt(budget, make = selectorOnly, calls = 50) {
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

/** `toMessages` p50 in `format` on a full 200k window (the issue's session) that slides a turn per call. */
export async function toMessagesAt(format, budget = 200_000, calls = 20) {
  const session = filled(budget);
  const compiler = selectorOnly();
  const times = [];
  for (let i = 0; i < calls + 3; i++) {
    session.record("user_input", `and step ${i}?`);
    const ctx = await compiler.compile(session, budget, { systemPrompt: "You are an operations assistant." });
    const start = performance.now();
    ctx.toMessages({ format });
    if (i >= 3) times.push(performance.now() - start);
    ctx.free();
  }
  session.free?.();
  return p50(times);
}

/** The first compile every cold start below times (its file, for the scripts that import it). */
const FIRST_COMPILE = fileURLToPath(new URL("../tests/js/children/first_compile.mjs", import.meta.url));

const OURS = `
import { firstCompile } from ${JSON.stringify(FIRST_COMPILE)};
const t0 = performance.now();
const pkg = await import("agent-context-compiler");
const t1 = performance.now();
await firstCompile(pkg);
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

const root = fileURLToPath(new URL("..", import.meta.url));
const bin = (name) => join(root, "node_modules/.bin", name);

/** A consumer directory whose node_modules holds this package (a link to it), for Deno and the worker's bundle. */
function consumer(pkg = root) {
  const dir = mkdtempSync(join(tmpdir(), "acc-cold-"));
  mkdirSync(join(dir, "node_modules"));
  symlinkSync(pkg, join(dir, "node_modules/agent-context-compiler"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module", dependencies: { "agent-context-compiler": "*" } }));
  return dir;
}

/**
 * Median over `runs` fresh Deno processes of OURS's { load, first }, through
 * npm: (the Node entry, as Deno resolves it), of the package at `pkg`.
 */
export function freshDeno(runs = 5, pkg = root) {
  const dir = consumer(pkg);
  try {
    writeFileSync(join(dir, "cold.mjs"), OURS.replace('import("agent-context-compiler")', 'import("npm:agent-context-compiler")'));
    const all = [];
    for (let i = 0; i < runs; i++) {
      const out = spawnSync(bin("deno"), ["run", "--node-modules-dir=manual", "--allow-read", "--allow-env", "cold.mjs"], { cwd: dir, encoding: "utf8" });
      if (out.status !== 0) throw new Error(`Deno's cold start script failed: ${out.stderr}`);
      all.push(JSON.parse(out.stdout.trim().split("\n").at(-1)));
    }
    const total = all.map((r) => r.load + r.first);
    return all[total.indexOf(p50(total))];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The worker using the package: the main module as wrangler leaves it, initSync at load, a first compile per request. */
const WORKER = `
import { initSync, ContextCompiler, HistorySelector, Session } from "agent-context-compiler";
import main from "agent-context-compiler/context_compiler.wasm";
import { firstCompile } from ${JSON.stringify(FIRST_COMPILE)};
initSync({ main });
export default {
  async fetch() {
    return Response.json(await firstCompile({ ContextCompiler, HistorySelector, Session }));
  },
};
`;
const EMPTY_WORKER = `export default { async fetch() { return Response.json([]); } };`;

/** The workerd configuration serving `worker.js` (and the main module when `wasm`) on `port`. */
const workerdConfig = (port, wasm) => `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .worker)],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    ${wasm ? '(name = "agent-context-compiler/context_compiler.wasm", wasm = embed "context_compiler.wasm"),' : ""}
  ],
  compatibilityDate = "2026-11-01",
);
`;

/** Resolves when something listens on `port` (tried every millisecond). */
async function listening(port, deadline) {
  for (;;) {
    const up = await new Promise((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => (socket.destroy(), resolve(true)));
      socket.once("error", () => resolve(false));
    });
    if (up) return;
    if (performance.now() > deadline) throw new Error("workerd did not listen");
    await new Promise((r) => setTimeout(r, 1));
  }
}

/**
 * workerd, timed from outside (a worker's timers are frozen): from starting
 * workerd to its listening and the first response, median over `runs` fresh
 * processes, for the worker using the package (bundled as wrangler does) and
 * for an empty worker (the package at `pkg`).
 */
export async function freshWorkerd(runs = 5, pkg = root) {
  const dir = consumer(pkg);
  try {
    const out = {};
    for (const [name, code] of [["ours", WORKER], ["empty", EMPTY_WORKER]]) {
      const wd = join(dir, name);
      mkdirSync(wd);
      writeFileSync(join(dir, `${name}.mjs`), code);
      await build({
        entryPoints: [join(dir, `${name}.mjs`)], bundle: true, format: "esm", platform: "neutral",
        conditions: ["workerd", "worker", "browser"], external: ["*.wasm"], outfile: join(wd, "worker.js"), logLevel: "warning",
      });
      copyFileSync(join(pkg, "pkg/context_compiler_bg.wasm"), join(wd, "context_compiler.wasm"));
      const runsOf = [];
      for (let i = 0; i < runs; i++) {
        const port = 20000 + Math.floor(Math.random() * 20000);
        writeFileSync(join(wd, "config.capnp"), workerdConfig(port, name === "ours"));
        const start = performance.now();
        const child = spawn(bin("workerd"), ["serve", "config.capnp"], { cwd: wd, stdio: ["ignore", "ignore", "pipe"] });
        let stderr = "";
        child.stderr.on("data", (d) => (stderr += d));
        try {
          await listening(port, start + 30_000);
          const up = performance.now();
          const response = await fetch(`http://127.0.0.1:${port}/`);
          const body = await response.json();
          const answered = performance.now();
          if (!response.ok || (name === "ours" && body.length !== 4)) throw new Error(`the worker answered ${response.status}: ${JSON.stringify(body)} ${stderr}`);
          runsOf.push({ listen: up - start, request: answered - up, total: answered - start });
        } finally {
          child.kill();
        }
      }
      const totals = runsOf.map((r) => r.total);
      out[name] = runsOf[totals.indexOf(p50(totals))];
    }
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The cold start on Deno and workerd, beside Node's (printed by the caller). */
export async function coldStartElsewhere() {
  const deno = freshDeno();
  console.log(`  cold start on Deno ${spawnSync(bin("deno"), ["--version"], { encoding: "utf8" }).stdout.split(/\s+/)[1]}, fresh process (median of 5): import ${ms(deno.load)} + first compile ${ms(deno.first)} ms = ${ms(deno.load + deno.first)} ms`);
  const w = await freshWorkerd();
  console.log(
    `  cold start on workerd, from outside (median of 5 fresh processes): start to listening ${ms(w.ours.listen)} ms (an empty worker ${ms(w.empty.listen)} ms), first request ${ms(w.ours.request)} ms (empty ${ms(w.empty.request)} ms); the package adds ${ms(w.ours.listen - w.empty.listen)} ms at load + ${ms(w.ours.request - w.empty.request)} ms to the first request = ${ms(w.ours.total - w.empty.total)} ms`,
  );
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
  // Every format hands out again the items of the previous call's list
  // that render the same (issue 65, item 2).
  const formats = ["openai", "anthropic", "openai-responses", "gemini", "ai-sdk"];
  const rendered = [];
  for (const format of formats) rendered.push(`${format} ${ms(await toMessagesAt(format))} ms`);
  console.log(`  toMessages alone at 200,000, p50 per format: ${rendered.join(", ")}`);
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
  console.log(`  cold start on Node ${process.version}, fresh process (median of 5): this library import ${ms(ours.load)} + first compile ${ms(ours.first)} ms = ${ms(a)} ms; LangChain + js-tiktoken import ${ms(peer.load)} + first trimMessages ${ms(peer.first)} ms = ${ms(b)} ms; ${(b / a).toFixed(1)}× faster (target ≥ 35×)`);
  await coldStartElsewhere();
}

if (import.meta.url === `file://${process.argv[1]}`) await bigWindowBench();
