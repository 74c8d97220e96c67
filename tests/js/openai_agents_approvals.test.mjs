// agentsSession through a run that stops for approvals (tools with
// `needsApproval`), on OpenAIResponsesModel over a scripted fetch: a run
// resumed (in this process from its RunState, or from RunState.fromString)
// records nothing again; paused, serialised (RunState.toString) and resumed
// in other processes with approvals and a rejection, every event is
// recorded once, the waits and decisions are in the session, and every
// request is valid with every call answered once.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RunState, run } from "@openai/agents";
import { FsArtifactStore, Session } from "agent-context-compiler";
import { scriptedApi } from "./wire/index.mjs";
import { childJson } from "./helpers.mjs";
import { QUESTION, REASON, agentsApproval, approvalModel, assertPausedAndResumed } from "./approvals_loop.mjs";

const kindsOf = (session) => session.eventLog.events.map((e) => e.kind);

test("a run resumed after approvals, from its state and from RunState.fromString, records its input, calls and usage once", async () => {
  const session = new Session({ sessionId: "agents-resume" });
  const api = scriptedApi({ reply: approvalModel() });
  const { agent, session: sdkSession, callModelInputFilter } = await agentsApproval({ session, fetch: api.fetch });
  const first = await run(agent, QUESTION, { session: sdkSession, callModelInputFilter });
  assert.deepEqual(first.interruptions.map((i) => i.rawItem.callId), ["call_1", "call_3"]);
  for (const item of first.interruptions) first.state.approve(item);
  // Resumed in this process, from the state itself.
  const second = await run(agent, first.state, { session: sdkSession, callModelInputFilter });
  assert.deepEqual(second.interruptions.map((i) => i.rawItem.callId), ["call_4"]);
  // Resumed from the state's text.
  const state = await RunState.fromString(agent, second.state.toString());
  state.reject(state.getInterruptions()[0], { message: REASON });
  const third = await run(agent, state, { session: sdkSession, callModelInputFilter });
  assert.match(third.finalOutput, /deploy was rejected/);
  const kinds = kindsOf(session);
  assert.equal(kinds.filter((k) => k === "user_input").length, 1, `the question once: ${kinds}`);
  assert.equal(kinds.filter((k) => k === "tool_call").length, 4);
  assert.equal(kinds.filter((k) => ["tool_success", "tool_error"].includes(k)).length, 4);
  assert.equal(kinds.filter((k) => k === "model_usage").length, api.requests.length, `a usage per model call: ${kinds}`);
  session.free();
});

test("paused, serialised and resumed in two other processes with approvals and a rejection: every event once, the decisions in the session, every request valid", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "acc-agents-approvals-"));
  try {
    const store = new FsArtifactStore({ baseDir: dir });
    const session = new Session({ sessionId: "agents-approvals" });
    const api = scriptedApi({ reply: approvalModel() });
    const { agent, session: sdkSession, callModelInputFilter, recordApprovals } = await agentsApproval({ session, store, fetch: api.fetch });
    const first = await run(agent, QUESTION, { session: sdkSession, callModelInputFilter });
    const waits = await recordApprovals(first);
    assert.deepEqual(waits.map((e) => [e.kind, e.data.call_id]), [["approval_requested", "call_1"], ["approval_requested", "call_3"]]);
    assert.deepEqual(await recordApprovals(first), [], "recorded once");
    await assert.rejects(recordApprovals({ state: null }), { code: "INVALID_ARGUMENT" });
    assert.deepEqual(session.pendingApprovals().map((p) => p.callId), ["call_1", "call_3"]);
    const stateFile = join(dir, "run-state.json");
    writeFileSync(stateFile, first.state.toString());
    session.free();

    const resumed = await childJson("agents_approval.mjs", dir, "agents-approvals", stateFile, JSON.stringify({ call_1: { approve: true }, call_3: { approve: true } }));
    assert.deepEqual(resumed.interruptions, ["call_4"]);
    const last = await childJson("agents_approval.mjs", dir, "agents-approvals", stateFile, JSON.stringify({ call_4: { approve: false, reason: REASON } }));
    assert.match(last.finalOutput, /deploy was rejected/);

    await assertPausedAndResumed(t, { store, sessionId: "agents-approvals", runs: [api.requests, resumed.requests, last.requests], format: "openai-responses", edited: false });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
