// Run in a child process with --expose-gc by hostile_host.test.mjs: many
// tool calls, every object freed; prints the JS heap growth per call.
import { PerceptionAligner, SchemaRegistry, Session, ToolInterruptHandler } from "agent-context-compiler";

const calls = Number(process.argv[2] || 20000);
// "settling": the tool answers; "hanging": it never settles and times out.
const hanging = process.argv[3] === "hanging";
const bridge = hanging ? () => new Promise(() => {}) : async () => "ok";
const options = hanging ? { timeoutMs: 1 } : undefined;
const run = async (n) => {
  for (let i = 0; i < n; i++) {
    const session = new Session();
    const normalizer = new PerceptionAligner(new SchemaRegistry());
    const handler = new ToolInterruptHandler({ bridge, normalizer, session });
    await handler.call("t", { i }, options);
    handler.free();
    normalizer.free();
    session.free();
  }
};
const settle = async () => {
  for (let i = 0; i < 3; i++) {
    global.gc();
    await new Promise((r) => setTimeout(r, 20));
  }
};
await run(Math.min(2000, calls / 4));
await settle();
const before = process.memoryUsage().heapUsed;
await run(calls);
await settle();
const after = process.memoryUsage().heapUsed;
console.log(JSON.stringify({ calls, bytesPerCall: (after - before) / calls }));
