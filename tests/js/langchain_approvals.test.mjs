// contextMiddleware beside humanInTheLoopMiddleware on createAgent, through
// ChatOpenAI over a scripted fetch, the thread in LangGraph's PostgresSaver:
// an edit (which keeps the AI message's id) is recorded and reaches the
// model as edited; paused, checkpointed and resumed in other processes
// (Command({ resume })) with an approval, an edit and a rejection, every
// event is recorded once, the waits and decisions are in the session, and
// every request is valid with every call answered once.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { Command, MemorySaver } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { recordApprovals } from "agent-context-compiler/langchain";
import { FsArtifactStore, Session, checkRequest } from "agent-context-compiler";
import { scriptedApi, toolCallsIn, toolResultsIn } from "./wire/index.mjs";
import { childJson } from "./helpers.mjs";
import { pgSchema, serverUrl } from "./servers.mjs";
import { EDITED, QUESTION, REASON, approvalModel, assertPausedAndResumed, langchainApproval } from "./approvals_loop.mjs";

const db = await pgSchema("lc_approvals");
after(() => db.drop());

test("the middleware records the decisions as they take effect: an edit (which keeps the AI message's id) is recorded and reaches the model as edited", async () => {
  const session = new Session({ sessionId: "lc-edit" });
  const api = scriptedApi({ reply: approvalModel() });
  const agent = await langchainApproval({ sessionOf: () => session, fetch: api.fetch, checkpointer: new MemorySaver() });
  const config = { configurable: { thread_id: "lc-edit" } };
  await agent.invoke({ messages: [new HumanMessage(QUESTION)] }, config);
  // The pause recorded by hand (the contract's own call), the decisions left to the middleware.
  for (const id of ["call_1", "call_3"]) session.requestApproval(id);
  await agent.invoke(new Command({ resume: { decisions: [{ type: "approve" }, { type: "edit", editedAction: { name: "delete_file", args: EDITED } }] } }), config);
  const decided = session.eventLog.events.filter((e) => e.kind === "approval_decided").map((e) => [e.data.call_id, e.data.approve, e.data.arguments]);
  assert.deepEqual(decided, [["call_1", true, undefined], ["call_3", true, EDITED]]);
  const sent = toolCallsIn(api.requests[1]).find((c) => c.id === "call_3");
  assert.deepEqual(sent.arguments, EDITED, "the edited call is sent as it ran");
  session.free();
});

test("a reply's approved call that humanInTheLoopMiddleware drops (another call of the reply rejected) is decided as not run: nothing waits, no request carries it", async () => {
  const session = new Session({ sessionId: "lc-dropped" });
  const calls = [{ id: "call_1", name: "delete_file", arguments: { path: "build/a.log" } }, { id: "call_3", name: "delete_file", arguments: { path: "build/b.log" } }];
  const api = scriptedApi({ reply: (r) => (toolResultsIn(r).length > 0 ? { id: `chatcmpl-${r.index}`, text: "Kept build/b.log." } : { id: `chatcmpl-${r.index}`, toolCalls: calls }) });
  const agent = await langchainApproval({ sessionOf: () => session, fetch: api.fetch, checkpointer: new MemorySaver() });
  const config = { configurable: { thread_id: "lc-dropped" } };
  const first = await agent.invoke({ messages: [new HumanMessage(QUESTION)] }, config);
  recordApprovals(session, first);
  await agent.invoke(new Command({ resume: { decisions: [{ type: "approve" }, { type: "reject", message: REASON }] } }), config);
  const decided = Object.fromEntries(session.eventLog.events.filter((e) => e.kind === "approval_decided").map((e) => [e.data.call_id, e.data]));
  assert.equal(decided.call_1.approve, false);
  assert.match(decided.call_1.reason, /not run/);
  assert.match(decided.call_3.reason, /not on a Friday/);
  assert.deepEqual(session.pendingApprovals(), []);
  assert.equal(api.requests.length, 2);
  assert.deepEqual(toolCallsIn(api.requests[1]).map((c) => c.id), ["call_3"], "the dropped call is never sent");
  assert.deepEqual(checkRequest(api.requests[1].body.messages, { format: "openai" }), []);
  session.free();
});

test("paused, checkpointed (PostgresSaver) and resumed in two other processes with an approval, an edit and a rejection: every event once, the decisions in the session, every request valid", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "acc-lc-approvals-"));
  try {
    const store = new FsArtifactStore({ baseDir: dir });
    const session = new Session({ sessionId: "lc-approvals" });
    const api = scriptedApi({ reply: approvalModel() });
    const checkpointer = new PostgresSaver(db.pool, undefined, { schema: db.schema });
    await checkpointer.setup();
    const agent = await langchainApproval({ sessionOf: () => session, store, fetch: api.fetch, checkpointer });
    const first = await agent.invoke({ messages: [new HumanMessage(QUESTION)] }, { configurable: { thread_id: "lc-approvals" } });
    const waits = recordApprovals(session, first);
    assert.deepEqual(waits.map((e) => [e.kind, e.data.call_id]), [["approval_requested", "call_1"], ["approval_requested", "call_3"]]);
    assert.deepEqual(recordApprovals(session, first), [], "recorded once");
    assert.throws(() => recordApprovals(session, "interrupted"), { code: "INVALID_ARGUMENT" });
    assert.throws(() => recordApprovals(session, { __interrupt__: {} }), { code: "INVALID_ARGUMENT" });
    await session.sync(store);
    session.free();

    const decisions = [{ type: "approve" }, { type: "edit", editedAction: { name: "delete_file", args: EDITED } }];
    const resumed = await childJson("langchain_approval.mjs", dir, serverUrl("ACC_PG_URL"), db.schema, "lc-approvals", JSON.stringify(decisions));
    assert.deepEqual(resumed.waiting, ["deploy"]);
    assert.deepEqual(resumed.recorded, ["call_4"]);
    const last = await childJson("langchain_approval.mjs", dir, serverUrl("ACC_PG_URL"), db.schema, "lc-approvals", JSON.stringify([{ type: "reject", message: REASON }]));
    assert.match(last.text, /deploy was rejected/);

    await assertPausedAndResumed(t, { store, sessionId: "lc-approvals", runs: [api.requests, resumed.requests, last.requests], format: "openai", body: (r) => r.body.messages });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
