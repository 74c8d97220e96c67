// agent-context-compiler/openai-agents: run(agent, input, { session,
// callModelInputFilter }) with this package's session and compiler. Every
// model input is compiled within the budget and passes the SDK's own item
// schema, every step is recorded once (tool results redacted), and a second
// process continues the thread from the store.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { run, setTracingDisabled } from "@openai/agents";
import { protocol } from "@openai/agents-core";
import { agentsSession, toAgentInputItems } from "agent-context-compiler/openai-agents";
import { Compactor, ContextCompiler, FsArtifactStore, HistoryRecall, HistorySelector, Session } from "agent-context-compiler";
import { scriptedAgent } from "./agents_loop.mjs";
import { childJson } from "./helpers.mjs";

setTracingDisabled(true);
const BUDGET = 3000;
const SECRET = "Zq8vN2mLk4Rt7Wx1Yb3Hc6Jd9Fg0Ps5Ue2Ai7Ko";

/** The recommended compiler, and the token count of each context it compiled. */
function measured() {
  const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity }), new Compactor(), new HistoryRecall()] });
  const counts = [];
  return { counts, compiler: { async compile(s, budget, options) { const ctx = await compiler.compile(s, budget, options); counts.push(ctx.tokenCount); return ctx; } } };
}

/** Every call in `input` is followed by its result. */
const paired = (input) =>
  input.every((item, i) => item.type !== "function_call" || input.slice(i + 1).some((r) => r.type === "function_call_result" && r.callId === item.callId));

async function thirtyTurns() {
  const source = new Session({ sessionId: "agents-thread" });
  const dir = mkdtempSync(join(tmpdir(), "acc-agents-"));
  const store = new FsArtifactStore({ baseDir: dir });
  const { compiler, counts } = measured();
  const { agent, inputs, instructions } = scriptedAgent();
  const compiles = [];
  const onCompile = (ctx) => compiles.push({ ledger: ctx.ledger, cache: ctx.cache, tokenCount: ctx.tokenCount });
  const { session, callModelInputFilter } = agentsSession({ session: source, compiler, budget: BUDGET, store, onCompile });
  for (let turn = 1; turn <= 30; turn++) {
    const result = await run(agent, `Turn ${turn}: what did the nightly job log?`, { session, callModelInputFilter });
    assert.equal(result.finalOutput, `Turn ${turn}: the job ran.`);
  }
  return { source, session, dir, counts, inputs, instructions, compiles };
}

test("a 30-turn Agents SDK tool loop: within budget, question present, calls paired, every step recorded once, secrets kept out", async () => {
  const { source, session, dir, counts, inputs, instructions, compiles } = await thirtyTurns();
  try {
    assert.equal(inputs.length, 60);
    // onCompile saw every compiled context: its ledger adds up, its cache report is there.
    assert.equal(compiles.length, 60);
    for (const c of compiles) assert.equal(c.ledger.included.reduce((n, p) => n + p.tokens, 0), c.tokenCount);
    assert.equal(compiles[0].cache.miss.cause, "first");
    assert.equal(counts.length, 60);
    for (const c of counts) assert.ok(c <= BUDGET, `${c} tokens`);
    inputs.forEach((input, i) => {
      const turn = Math.floor(i / 2) + 1;
      assert.ok(input.some((item) => item.role === "user" && item.content === `Turn ${turn}: what did the nightly job log?`), `turn ${turn}'s question`);
      assert.ok(paired(input), `input ${i} paired`);
      assert.ok(!JSON.stringify(input).includes(SECRET), "no secret reaches the model");
      assert.match(instructions[i], /^You are an SRE\./);
    });
    const kinds = source.eventLog.events.map((e) => e.kind);
    const count = (k) => kinds.filter((x) => x === k).length;
    assert.deepEqual([count("user_input"), count("tool_call"), count("tool_success"), count("assistant_output"), count("model_usage")], [30, 30, 30, 30, 60]);
    assert.ok(!source.exportJson().includes(SECRET), "the session holds no secret");
    // getItems gives the history as the SDK's items.
    const items = await session.getItems();
    assert.equal(items.length, 120);
    for (const item of items) protocol.ModelItem.parse(item);
    assert.equal((await session.getItems(3)).length, 3);
    assert.equal(await session.getSessionId(), "agents-thread");
    await assert.rejects(session.popItem(), { code: "INVALID_ARGUMENT" });
    await assert.rejects(session.clearSession(), { code: "INVALID_ARGUMENT" });
    const loaded = await new FsArtifactStore({ baseDir: dir }).loadSession(source.sessionId);
    assert.equal(loaded.eventLog.length, source.eventLog.length, "the store holds every event");
    loaded.free();
  } finally {
    source.free();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a second process continues the thread from the store", async () => {
  const { source, dir } = await thirtyTurns();
  try {
    const before = source.eventLog.length;
    const out = await childJson("agents_turn.mjs", dir, source.sessionId, "31");
    assert.equal(out.text, "Turn 31: the job ran.");
    // The new turn recorded once, nothing of the thread again (a compaction may come with it).
    const added = out.kinds.slice(before).filter((k) => k !== "context_compacted");
    assert.deepEqual(added.toSorted(), ["assistant_output", "model_usage", "model_usage", "tool_call", "tool_success", "user_input"]);
    assert.ok(out.inputs[0].some((i) => i.role === "user" && i.content === "Turn 30: what did the nightly job log?"), "the earlier turns reach the model");
    const loaded = await new FsArtifactStore({ baseDir: dir }).loadSession(source.sessionId);
    assert.equal(loaded.eventLog.length, out.kinds.length);
    loaded.free();
  } finally {
    source.free();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("an onCompile that throws fails the model call with its error; nothing is sent", async () => {
  const source = new Session({ sessionId: "agents-throwing" });
  const { compiler } = measured();
  const { agent, inputs } = scriptedAgent();
  const onCompile = () => {
    throw new Error("dashboard offline");
  };
  const { session, callModelInputFilter } = agentsSession({ session: source, compiler, budget: BUDGET, onCompile });
  await assert.rejects(run(agent, "Turn 1: what did the nightly job log?", { session, callModelInputFilter }), /dashboard offline/);
  assert.equal(inputs.length, 0, "the model was not called");
  source.free();
});

test("options are checked; compiled items pass the SDK's schema", async () => {
  const s = new Session();
  const { compiler } = measured();
  assert.throws(() => agentsSession({ session: s, compiler, budget: 100, sessionID: "x" }), { code: "INVALID_ARGUMENT", message: /unknown option sessionID/ });
  assert.throws(() => agentsSession({ session: s, budget: 100 }), { code: "INVALID_ARGUMENT" });
  assert.throws(() => agentsSession({ session: {}, compiler, budget: 100 }), { code: "INVALID_ARGUMENT" });
  assert.throws(() => agentsSession({ session: s, compiler, budget: 100, onCompile: "log" }), { code: "INVALID_ARGUMENT", message: /onCompile/ });
  const items = toAgentInputItems([
    { type: "message", role: "user", content: "How full?" },
    { type: "function_call", call_id: "c1", name: "df", arguments: "{}" },
    { type: "function_call_output", call_id: "c1", output: "92%" },
    { type: "message", role: "assistant", content: "92%." },
  ]);
  for (const item of items) protocol.ModelItem.parse(item);
  assert.deepEqual(items.map((i) => [i.type, i.callId, i.name]), [["message", undefined, undefined], ["function_call", "c1", "df"], ["function_call_result", "c1", "df"], ["message", undefined, undefined]]);
  s.free();
});
