// agent-context-compiler/langchain's contextMiddleware on createAgent
// (langchain 1.x) with LangGraph's PostgresSaver: every model call is
// compiled from the thread's session within the budget, every step is
// recorded once, the checkpointed thread holds tool results redacted, and a
// second process continues the thread from the store and the checkpointer.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAgent } from "langchain";
import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { contextMiddleware, toLangChainMessages } from "agent-context-compiler/langchain";
import { Compactor, ContextCompiler, FsArtifactStore, HistoryRecall, HistorySelector, Session } from "agent-context-compiler";
import { ScriptedChatModel, readLog } from "./langchain_loop.mjs";
import { pgSchema, serverUrl } from "./servers.mjs";
import { childJson } from "./helpers.mjs";

const BUDGET = 3000;
const SECRET = "Zq8vN2mLk4Rt7Wx1Yb3Hc6Jd9Fg0Ps5Ue2Ai7Ko";
const text = (m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content));

function measured() {
  const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity }), new Compactor(), new HistoryRecall()] });
  const counts = [];
  return { counts, compiler: { async compile(s, budget, options) { const ctx = await compiler.compile(s, budget, options); counts.push(ctx.tokenCount); return ctx; } } };
}

/** Every AI tool call in `messages` is answered by a ToolMessage under its id. */
const paired = (messages) =>
  messages.every((m, i) => m.getType() !== "ai" || (m.tool_calls ?? []).every((c) => messages.slice(i + 1).some((t) => t.getType() === "tool" && t.tool_call_id === c.id)));

const db = await pgSchema("langchain");
after(() => db.drop());

test("a 30-turn createAgent tool loop with PostgresSaver: within budget, question present, calls paired, recorded once, no secret checkpointed; a second process continues", async () => {
  const dir = mkdtempSync(join(tmpdir(), "acc-langchain-"));
  const store = new FsArtifactStore({ baseDir: dir });
  const sessions = new Map();
  const { compiler, counts } = measured();
  const calls = [];
  const checkpointer = new PostgresSaver(db.pool, undefined, { schema: db.schema });
  await checkpointer.setup();
  const agent = createAgent({
    model: new ScriptedChatModel(calls), tools: [readLog], systemPrompt: "You are an SRE.", checkpointer,
    middleware: [contextMiddleware({ session: (id) => sessions.get(id) ?? sessions.set(id, new Session({ sessionId: id })).get(id), compiler, budget: BUDGET, store })],
  });
  const config = { configurable: { thread_id: "lc-thread" } };
  try {
    for (let turn = 1; turn <= 30; turn++) {
      const result = await agent.invoke({ messages: [new HumanMessage(`Turn ${turn}: what did the nightly job log?`)] }, config);
      assert.equal(result.messages.at(-1).content, `Turn ${turn}: the job ran.`);
      // The reply carries its compile's ledger (adding up to what was sent) and cache report.
      const { ledger, cache } = result.messages.at(-1).response_metadata.agentContextCompiler;
      assert.equal(ledger.included.reduce((n, p) => n + p.tokens, 0), counts.at(-1));
      assert.ok(cache.prefixTokens > 0 || cache.miss?.cause === "first", JSON.stringify(cache));
    }
    assert.equal(calls.length, 60);
    for (const c of counts) assert.ok(c <= BUDGET, `${c} tokens`);
    calls.forEach((messages, i) => {
      const turn = Math.floor(i / 2) + 1;
      assert.equal(messages[0].getType(), "system");
      assert.match(text(messages[0]), /^You are an SRE\./);
      assert.ok(messages.some((m) => m.getType() === "human" && m.content === `Turn ${turn}: what did the nightly job log?`), `turn ${turn}'s question`);
      assert.ok(paired(messages), `call ${i} paired`);
      assert.ok(!messages.some((m) => text(m).includes(SECRET)), "no secret reaches the model");
    });
    const session = sessions.get("lc-thread");
    const kinds = session.eventLog.events.map((e) => e.kind);
    const count = (k) => kinds.filter((x) => x === k).length;
    assert.deepEqual([count("user_input"), count("tool_call"), count("tool_success"), count("assistant_output"), count("model_usage")], [30, 30, 30, 30, 60]);
    // The checkpointed thread holds the redacted result, as the session does.
    const state = await agent.getState(config);
    assert.ok(!JSON.stringify(state.values.messages.map((m) => m.content)).includes(SECRET), "the checkpointer holds no secret");
    assert.ok(state.values.messages.some((m) => m.getType() === "tool" && /REDACTED/.test(text(m))));

    const before = session.eventLog.length;
    const out = await childJson("langchain_turn.mjs", dir, serverUrl("ACC_PG_URL"), db.schema, "lc-thread", "31");
    assert.equal(out.text, "Turn 31: the job ran.");
    // The new turn recorded once, nothing of the thread again (a compaction may come with it).
    assert.deepEqual(out.kinds.slice(before).filter((k) => k !== "context_compacted"), ["user_input", "model_usage", "tool_call", "tool_success", "model_usage", "assistant_output"]);
    assert.equal(out.events, out.kinds.length);
    assert.ok(out.calls[0].some(([type, content]) => type === "human" && content === "Turn 30: what did the nightly job log?"), "the earlier turns reach the model");
  } finally {
    for (const s of sessions.values()) s.free();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a session per thread_id; options checked; compiled messages are LangChain messages", async () => {
  const sessions = new Map();
  const { compiler } = measured();
  const agent = createAgent({
    model: new ScriptedChatModel(), tools: [readLog], checkpointer: new MemorySaver(),
    middleware: [contextMiddleware({ session: (id) => sessions.get(id) ?? sessions.set(id, new Session({ sessionId: id })).get(id), compiler, budget: BUDGET })],
  });
  for (const id of ["a", "b", "a"]) await agent.invoke({ messages: [new HumanMessage(`Turn 1: thread ${id}`)] }, { configurable: { thread_id: id } });
  assert.deepEqual([...sessions.keys()], ["a", "b"]);
  assert.equal(sessions.get("a").eventLog.events.filter((e) => e.kind === "user_input").length, 2);
  await assert.rejects(agent.invoke({ messages: [new HumanMessage("Turn 1: none")] }), /thread_id/);
  const s = new Session();
  assert.throws(() => contextMiddleware({ session: s, compiler, budget: 1, keeplast: 3 }), { code: "INVALID_ARGUMENT", message: /unknown option keeplast/ });
  assert.throws(() => contextMiddleware({ session: s, budget: 1 }), { code: "INVALID_ARGUMENT" });
  const { systemMessage, messages } = toLangChainMessages([
    { role: "system", content: "You are an SRE." },
    { role: "user", content: "How full?" },
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "df", arguments: "{\"path\":\"/\"}" } }] },
    { role: "tool", tool_call_id: "c1", content: "92%" },
  ]);
  assert.equal(systemMessage.content, "You are an SRE.");
  assert.deepEqual(messages.map((m) => m.getType()), ["human", "ai", "tool"]);
  assert.deepEqual(messages[1].tool_calls[0].args, { path: "/" });
  for (const x of [s, ...sessions.values()]) x.free();
});
