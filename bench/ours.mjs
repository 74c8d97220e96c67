// This library's side of the compile benchmark, in a worker of its own (a
// fresh heap, like the peer's): per turn, record one event and compile.
import { parentPort, workerData } from "node:worker_threads";
import { ContextCompiler, HistorySelector, Session } from "agent-context-compiler";
import { generateTrace } from "./trace.mjs";

const { size, turns, budget, systemPrompt } = workerData;
const trace = generateTrace(size + turns, 42);
const record = (session, e) =>
  e.kind === "user_input"
    ? session.record("user_input", { content: e.content })
    : session.record(e.kind === "tool_output" ? "phase_result" : "assistant_output", { role: e.role, content: e.content });

const session = new Session();
for (const e of trace.slice(0, size)) record(session, e);
const compiler = new ContextCompiler({ processors: [new HistorySelector({ keepFirst: 0, keepLast: Infinity })] });
for (let w = 0; w < 5; w++) (await compiler.compile(session, budget, { systemPrompt })).free(); // warm-up
for (let t = 0; t < turns; t++) {
  record(session, trace[size + t]);
  const start = performance.now();
  const ctx = await compiler.compile(session, budget, { systemPrompt });
  const ms = performance.now() - start;
  parentPort.postMessage({ ms, kept: ctx.history.length });
  ctx.free();
}
parentPort.postMessage({ done: true });
