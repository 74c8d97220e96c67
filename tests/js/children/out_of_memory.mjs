// Run by hostile_host.test.mjs with --wasm-max-mem-pages (a small wasm memory
// limit) and --expose-gc: runs the instance out of memory in a synchronous
// call ("sync") or inside an async task ("async"), then reports what every
// kind of later use did. The process must live on and exit 0.
import {
  ContextCompiler,
  PerceptionAligner,
  SchemaRegistry,
  Session,
  ToolInterruptHandler,
  countTokens,
} from "agent-context-compiler";
import { outcome, settled } from "./outcomes.mjs";

const mode = process.argv[2];

const session = new Session({ sessionId: "oom" });
session.record("user_input", "keep me");
// A promise that is pending when the instance stops: a compile waiting on a
// processor that never settles.
const waiting = settled(
  new ContextCompiler({ processors: [() => new Promise(() => {})] }).compile(session, 1000, { systemPrompt: "s" }),
);

let failure;
if (mode === "sync") {
  const chunk = "x".repeat(16 * 1024 * 1024);
  for (let i = 0; i < 64 && failure === undefined; i++) {
    const r = outcome(() => session.record("tool_success", { i, chunk }));
    if (!r.ok) failure = r;
  }
} else {
  const huge = "y".repeat(96 * 1024 * 1024);
  const handler = new ToolInterruptHandler({
    bridge: async () => huge,
    normalizer: new PerceptionAligner(new SchemaRegistry()),
    session,
  });
  failure = await settled(handler.call("big", {}));
}

const after = {
  record: outcome(() => session.record("user_input", "after")),
  getter: outcome(() => session.sessionId),
  construct: outcome(() => new Session()),
  countTokens: outcome(() => countTokens("x")),
  importJson: outcome(() => Session.importJson("{}")),
  free: outcome(() => session.free()),
  compile: await settled(Promise.resolve().then(() => new ContextCompiler().compile(session, 100))),
};
const pending = await waiting;
// Dropped objects are finalised by the garbage collector after the trap.
globalThis.gc();
await new Promise((r) => setTimeout(r, 50));
globalThis.gc();
await new Promise((r) => setTimeout(r, 50));
console.log(JSON.stringify({ failure, after, pending }));
