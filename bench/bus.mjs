// The event bus and the turn runner.
//
// 1. Bus throughput: 100,000 events dispatched to 1 and to 10 handlers
//    (each adds the event's number to a counter), this library's EventBus
//    (queued, FIFO, each event's handlers run concurrently and isolated)
//    beside Node's EventEmitter (synchronous, no isolation, no queue) and
//    emittery (async, each emit awaited: the same FIFO semantics as ours).
// 2. What runCompiled adds per turn over the same turn written by hand
//    (record, compile, toMessages, model, tool call through the handler,
//    compile again, model, record) on a tool-heavy session, in the README's
//    recommended configuration.
import { EventEmitter } from "node:events";
import Emittery from "emittery";
import {
  ArtifactAttacher, Compactor, ContextCompiler, EventBus, HistorySelector, MemoryArtifactStore, Session,
  ToolInterruptHandler, runCompiled,
} from "agent-context-compiler";
import { prose, rng, toolOutput } from "./trace.mjs";

const EVENTS = 100_000;
const rate = (n, ms) => Math.round(n / (ms / 1000)).toLocaleString("en");
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function ours(handlers) {
  const bus = new EventBus({ maxQueue: EVENTS });
  let sum = 0;
  for (let h = 0; h < handlers; h++) bus.on("tick", (e) => void (sum += e.data.n));
  globalThis.gc?.();
  const t0 = performance.now();
  bus.start();
  for (let i = 0; i < EVENTS; i++) bus.emit({ type: "tick", agentId: "a", data: { n: 1 } });
  await bus.stop();
  const ms = performance.now() - t0;
  if (sum !== EVENTS * handlers || bus.stats.dispatched !== EVENTS) throw new Error(`bus lost events: ${sum}`);
  bus.free();
  return ms;
}

function eventEmitter(handlers) {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(handlers + 1);
  let sum = 0;
  for (let h = 0; h < handlers; h++) emitter.on("tick", (e) => void (sum += e.data.n));
  globalThis.gc?.();
  const t0 = performance.now();
  for (let i = 0; i < EVENTS; i++) emitter.emit("tick", { type: "tick", agentId: "a", data: { n: 1 }, timestamp: Date.now() });
  const ms = performance.now() - t0;
  if (sum !== EVENTS * handlers) throw new Error("EventEmitter lost events");
  return ms;
}

async function emittery(handlers) {
  const emitter = new Emittery();
  let sum = 0;
  for (let h = 0; h < handlers; h++) emitter.on("tick", (e) => void (sum += e.data.n));
  globalThis.gc?.();
  const t0 = performance.now();
  for (let i = 0; i < EVENTS; i++) await emitter.emit("tick", { type: "tick", agentId: "a", data: { n: 1 }, timestamp: Date.now() });
  const ms = performance.now() - t0;
  if (sum !== EVENTS * handlers) throw new Error("emittery lost events");
  return ms;
}

const BUDGET = 32_000;
const SYSTEM = `You are a coding agent working in a large repository. ${prose(rng(7), 9_800)}`;
const TURNS = 200;

/** A session with `turns` earlier tool-heavy turns, and its compiler and handler. */
async function setup(turns, seed) {
  const r = rng(seed);
  const store = new MemoryArtifactStore();
  const session = new Session();
  const bridge = () => toolOutput(r, 200 + Math.floor(r() * 12_000));
  const handler = new ToolInterruptHandler({ session, bridge, artifactStore: store, externalizeThreshold: 4096 });
  const compiler = new ContextCompiler({
    layout: "zoned",
    processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity }), new ArtifactAttacher(store, { thresholdBytes: 4096 }), new Compactor()],
  });
  for (let t = 0; t < turns; t++) {
    session.record("user_input", { text: prose(r, 200) });
    session.record("assistant_output", { text: "Checking the logs." });
    await handler.call("read_logs", { turn: t });
    session.record("assistant_output", { text: prose(r, 400) });
  }
  return { session, handler, compiler, r };
}

/** The model both sides call: a tool call first, then an answer. */
const model = (messages) =>
  messages.at(-1).role === "tool" ? "The logs show the build passed." : { content: "Checking the logs.", tool_calls: [{ id: "c", type: "function", function: { name: "read_logs", arguments: "{}" } }] };

async function byHand({ session, handler, compiler }, input) {
  session.record("user_input", { text: input });
  for (;;) {
    const ctx = await compiler.compile(session, BUDGET, { systemPrompt: SYSTEM });
    const messages = ctx.toMessages({ format: "openai" });
    ctx.free();
    const reply = model(messages);
    if (typeof reply === "string") {
      session.record("assistant_output", { text: reply });
      return reply;
    }
    session.record("assistant_output", { text: reply.content });
    await Promise.all(reply.tool_calls.map((c) => handler.call(c.function.name, JSON.parse(c.function.arguments))));
  }
}

async function withRunner({ session, handler, compiler }, input) {
  const result = await runCompiled(input, { session, compiler, toolHandler: handler, budget: BUDGET, systemPrompt: SYSTEM, model });
  return result.result;
}

/** Per-turn ms of `turn` over TURNS turns on a session with 100 earlier turns. */
async function perTurn(turn) {
  const fixture = await setup(100, 42);
  const times = [];
  for (let t = 0; t < TURNS; t++) {
    globalThis.gc?.();
    const t0 = performance.now();
    await turn(fixture, `Turn ${t}: ${prose(fixture.r, 150)}`);
    times.push(performance.now() - t0);
  }
  return median(times);
}

/** Prints both tables. */
export async function busBench() {
  console.log(`\nevent bus: ${EVENTS.toLocaleString("en")} events dispatched (events/s; each handler adds to a counter)`);
  console.log("  handlers  this library EventBus  node:events EventEmitter  emittery (each emit awaited)  ours / EventEmitter  ours / emittery");
  for (const handlers of [1, 10]) {
    await ours(handlers); // warm-up
    const a = await ours(handlers);
    const b = eventEmitter(handlers);
    const c = await emittery(handlers);
    console.log(`  ${String(handlers).padStart(8)}  ${rate(EVENTS, a).padStart(21)}  ${rate(EVENTS, b).padStart(24)}  ${rate(EVENTS, c).padStart(28)}  ${(b / a).toFixed(2).padStart(19)}  ${(c / a).toFixed(2).padStart(15)}`);
  }

  await perTurn(byHand); // warm-up
  const hand = await perTurn(byHand);
  const runner = await perTurn(withRunner);
  console.log(`\nturn runner: one tool-heavy turn (compile, model, a tool call externalised at 4 KB, compile, model) on a session of 100 earlier turns, ${TURNS} turns, median ms`);
  console.log(`  written by hand (record, compile, toMessages, handler.call, ...): ${hand.toFixed(2)}`);
  console.log(`  runCompiled (the same steps, recorded, with the guard hook, step results): ${runner.toFixed(2)}   runner / by hand: ${(runner / hand).toFixed(2)}`);
}
