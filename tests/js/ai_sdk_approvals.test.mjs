// contextMiddleware through a generateText loop that stops for approvals
// (tools with `needsApproval`), on @ai-sdk/anthropic over a scripted fetch:
// recordApprovals records the waits and the decisions the SDK's messages
// hold (an edit of a call's input before approving included), the results
// the middleware finds record the decisions they show, and, paused,
// serialised (the messages as JSON) and resumed in other processes with an
// approval, an edit and a rejection, every event is recorded once and every
// request is valid with every call answered once, the edited call with its
// edited arguments.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateText, isStepCount } from "ai";
import { recordApprovals } from "agent-context-compiler/ai-sdk";
import { FsArtifactStore, Session } from "agent-context-compiler";
import { scriptedApi, toolCallsIn } from "./wire/index.mjs";
import { childJson } from "./helpers.mjs";
import { EDITED, QUESTION, REASON, aiSdkApproval, approvalModel, assertPausedAndResumed } from "./approvals_loop.mjs";

const PREFIX = "toolu_";
const approvalRequests = (messages) => messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((p) => p.type === "tool-approval-request");

test("the middleware records the decisions a resumed prompt's results show, before the results: an edit made before approving reaches the model as edited", async () => {
  const session = new Session({ sessionId: "ai-sdk-edit" });
  const api = scriptedApi({ reply: approvalModel(PREFIX) });
  const { model, tools } = await aiSdkApproval({ session, fetch: api.fetch });
  const messages = [{ role: "user", content: QUESTION }];
  const first = await generateText({ model, tools, messages, stopWhen: isStepCount(8), maxRetries: 0 });
  messages.push(...first.responseMessages);
  // The pause recorded by hand (the contract's own call), the decisions left to the middleware.
  const [a, b] = approvalRequests(messages);
  for (const p of [a, b]) session.requestApproval(p.toolCallId);
  messages.find((m) => m.role === "assistant").content.find((p) => p.toolCallId === b.toolCallId).input = EDITED;
  messages.push({ role: "tool", content: [{ type: "tool-approval-response", approvalId: a.approvalId, approved: true }, { type: "tool-approval-response", approvalId: b.approvalId, approved: true }] });
  await generateText({ model, tools, messages, stopWhen: isStepCount(8), maxRetries: 0 });
  const decided = session.eventLog.events.filter((e) => e.kind === "approval_decided").map((e) => [e.data.call_id, e.data.approve, e.data.arguments]);
  assert.deepEqual(decided, [[`${PREFIX}1`, true, undefined], [`${PREFIX}3`, true, EDITED]]);
  const sent = toolCallsIn(api.requests[1]).find((c) => c.id === `${PREFIX}3`);
  assert.deepEqual(sent.arguments, EDITED, "the edited call is sent as it ran");
  session.free();
});

test("paused, serialised (the messages as JSON) and resumed in two other processes with an approval, an edit and a rejection: every event once, the decisions in the session, every request valid", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "acc-ai-sdk-approvals-"));
  try {
    const store = new FsArtifactStore({ baseDir: dir });
    const session = new Session({ sessionId: "ai-sdk-approvals" });
    const api = scriptedApi({ reply: approvalModel(PREFIX) });
    const { model, tools } = await aiSdkApproval({ session, store, fetch: api.fetch });
    const messages = [{ role: "user", content: QUESTION }];
    const first = await generateText({ model, tools, messages, stopWhen: isStepCount(8), maxRetries: 0 });
    messages.push(...first.responseMessages);
    const waits = recordApprovals(session, messages);
    assert.deepEqual(waits.map((e) => [e.kind, e.data.call_id]), [["approval_requested", `${PREFIX}1`], ["approval_requested", `${PREFIX}3`]]);
    assert.deepEqual(recordApprovals(session, messages), [], "recorded once");
    assert.throws(() => recordApprovals(session, { messages }), { code: "INVALID_ARGUMENT" });
    assert.throws(() => recordApprovals({}, messages), { code: "INVALID_ARGUMENT" });
    assert.ok(session.eventLog.events.some((e) => e.kind === "tool_success" && e.data.call_id === `${PREFIX}2`), "the call that ran before the pause has its result");
    await session.sync(store);
    const file = join(dir, "messages.json");
    writeFileSync(file, JSON.stringify(messages));
    session.free();

    const resumed = await childJson("ai_sdk_approval.mjs", dir, "ai-sdk-approvals", file, JSON.stringify({ [`${PREFIX}1`]: { approve: true }, [`${PREFIX}3`]: { approve: true, args: EDITED } }));
    assert.deepEqual(resumed.recorded, ["approval_decided", "approval_decided"]);
    assert.deepEqual(resumed.waiting, [`${PREFIX}4`]);
    const last = await childJson("ai_sdk_approval.mjs", dir, "ai-sdk-approvals", file, JSON.stringify({ [`${PREFIX}4`]: { approve: false, reason: REASON } }));
    assert.match(last.text, /deploy was rejected/);

    await assertPausedAndResumed(t, { store, sessionId: "ai-sdk-approvals", runs: [api.requests, resumed.requests, last.requests], format: "anthropic", prefix: PREFIX });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
