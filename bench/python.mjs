// The Python package (python/, the component in wasmtime-py) beside the npm
// package and LangChain Python's trim_messages with tiktoken, in one run:
// a fresh interpreter's import and first compile (the compiled component
// cached, and not), and compile p50/p95 on the tool-heavy loop
// (agent_loop.mjs's script, the README's recommended configuration).
// tiktoken reads cl100k_base from a cache this writes from js-tiktoken's
// copy (the same bytes: tiktoken checks their SHA-256), as the machine has
// no route to tiktoken's download.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import cl100k from "js-tiktoken/ranks/cl100k_base";
import { BUDGET, SYSTEM, TOOLS, runOurs, script } from "./agent_loop.mjs";

const root = new URL("..", import.meta.url).pathname;
const TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken";

/** tiktoken's cache of cl100k_base, written from js-tiktoken's ranks. */
function tiktokenCache() {
  const dir = `${root}target/tiktoken-cache`;
  mkdirSync(dir, { recursive: true });
  const lines = [];
  for (const line of cl100k.bpe_ranks.split("\n").filter(Boolean)) {
    const [, offset, ...tokens] = line.split(" ");
    tokens.forEach((t, i) => lines.push([Number(offset) + i, t]));
  }
  lines.sort((a, b) => a[0] - b[0]);
  writeFileSync(`${dir}/${createHash("sha1").update(TIKTOKEN_URL).digest("hex")}`, lines.map(([n, t]) => `${t} ${n}\n`).join(""));
  return dir;
}

const quantiles = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: s[Math.floor(s.length / 2)], p95: s[Math.min(s.length - 1, Math.floor(0.95 * s.length))] };
};
const ms = (x) => (x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(2) : x.toFixed(3));

/** Builds the wheel, runs the Python side, prints the table. */
export async function pythonBench(turns = 300, seed = 42) {
  const built = spawnSync("bash", [`${root}scripts/python.sh`, "--build-only"], { stdio: "inherit" });
  if (built.status !== 0) throw new Error("scripts/python.sh --build-only failed");
  const plan = `${root}target/python-bench-loop.json`;
  writeFileSync(plan, JSON.stringify({ budget: BUDGET, system: SYSTEM, tools: TOOLS, turns: script(turns, seed) }));
  const env = { ...process.env, TIKTOKEN_CACHE_DIR: tiktokenCache(), AGENT_CONTEXT_COMPILER_CACHE: `${root}target/python-cache` };
  const run = spawnSync(`${root}target/python-venv/bin/python`, [`${root}bench/python_loop.py`, plan], { env, encoding: "utf8", maxBuffer: 1 << 24 });
  if (run.status !== 0) throw new Error(`bench/python_loop.py failed:\n${run.stderr}`);
  const py = JSON.parse(run.stdout);
  globalThis.gc?.();
  const npm = quantiles((await runOurs(turns, seed)).ms.map(([, x]) => x));

  console.log(`\nPython (wasmtime-py 50.0.1 hosting the runner component) beside the npm package and LangChain Python:`);
  console.log(`  a fresh interpreter, import + first compile: ${ms(py.cold.ours)} ms (component compiled before and cached; ${ms(py.cold.ours_uncached)} ms uncached)`);
  console.log(`    LangChain Python: import + tiktoken cl100k_base + trim_messages: ${ms(py.cold.peer)} ms; ratio ${(py.cold.ours / py.cold.peer).toFixed(2)} (the interpreter alone: ${ms(py.cold.python)} ms)`);
  console.log(`  tool-heavy loop (${turns} turns, ${py.ours.calls} compiles, ${BUDGET.toLocaleString("en")}-token budget), compile + render p50/p95:`);
  console.log(`    Python package          ${ms(py.ours.p50)} / ${ms(py.ours.p95)} ms  (over budget: ${py.ours.over})`);
  console.log(`    npm package             ${ms(npm.p50)} / ${ms(npm.p95)} ms  (Python / npm p50: ${(py.ours.p50 / npm.p50).toFixed(2)})`);
  console.log(`    trim_messages + tiktoken ${ms(py.peer.p50)} / ${ms(py.peer.p95)} ms  (Python package / it, p50: ${(py.ours.p50 / py.peer.p50).toFixed(2)}; one shape, no pairing or caching)`);
}

if (import.meta.url === `file://${process.argv[1]}`) await pythonBench(process.argv[2] ? Number(process.argv[2]) : undefined);
