// Calls that wait for a person in runCompiled: a tool spec's `needsApproval`
// or the run's `needsApproval(call)` pauses the run (`stopReason:
// "approval"`); `runCompiled(null, { approvals })` resumes it, in this
// process or in another that loaded the session from a store. A rejection
// reaches the model as the call's outcome, an edit runs and is sent with the
// edited arguments, bad decisions are INVALID_ARGUMENT before anything is
// recorded, and two processes deciding one call answer it once.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { FsArtifactStore, Session, checkRequest, orchestrateCompiled, runCompiled } from "agent-context-compiler";
import { rejectsWithCode } from "./helpers.mjs";

const run = promisify(execFile);
const kinds = (session) => session.eventLog.events.map((e) => e.kind);

const specs = [
  { name: "delete_file", description: "Deletes a file", needsApproval: true, parameters: { type: "object", properties: { path: { type: "string" } } } },
  { name: "read_file", description: "Reads a file", parameters: { type: "object", properties: { path: { type: "string" } } } },
];

/** A model that asks for two calls first (one waits), then answers; it keeps each request and checks it. */
function model(format = "openai") {
  const requests = [];
  const respond = async (messages) => {
    requests.push(messages);
    assert.deepEqual(checkRequest(messages, { format }), []);
    if (requests.length === 1) {
      return {
        content: "",
        toolCalls: [
          { id: "call_del", name: "delete_file", arguments: { path: "old.log" } },
          { id: "call_read", name: "read_file", arguments: { path: "notes.txt" } },
        ],
      };
    }
    return "Done.";
  };
  return { respond, requests };
}

function bridge() {
  const ran = [];
  const execute = async (name, args) => {
    ran.push([name, args]);
    return { ok: name, args };
  };
  return { execute, ran };
}

/** The tool messages of an OpenAI request answering `id`. */
const answers = (messages, id) => messages.filter((m) => m.role === "tool" && m.tool_call_id === id);
const sentArguments = (messages, id) => {
  for (const m of messages) for (const c of m.tool_calls ?? []) if (c.id === id) return JSON.parse(c.function.arguments);
  return undefined;
};

async function paused() {
  const m = model();
  const b = bridge();
  const session = new Session({ sessionId: "approvals" });
  const result = await runCompiled("Clean up the logs", { budget: 4000, model: m, bridge: b.execute, tools: specs, session });
  return { m, b, session, result };
}

test("a run stops with the calls that wait and runs the others", async () => {
  const { b, session, result } = await paused();
  assert.equal(result.stopReason, "approval");
  assert.deepEqual(result.pending.map((p) => [p.callId, p.name, p.arguments]), [["call_del", "delete_file", { path: "old.log" }]]);
  assert.deepEqual(b.ran.map(([n]) => n), ["read_file"]);
  assert.deepEqual(session.pendingApprovals().map((p) => p.callId), ["call_del"]);
  assert.ok(kinds(session).includes("approval_requested"));
  assert.deepEqual(result.decided, []);
  assert.deepEqual(result.superseded, []);
});

test("a rejection reaches the model as the call's outcome, its reason redacted", async () => {
  const { m, b, session } = await paused();
  const reason = "keep it; token ghp_0123456789abcdefghij0123456789abcdef";
  const result = await runCompiled(null, { budget: 4000, model: m, bridge: b.execute, tools: specs, session, approvals: { call_del: { approve: false, reason } } });
  assert.equal(result.stopReason, "answered");
  assert.deepEqual(b.ran.map(([n]) => n), ["read_file"]);
  const [answer] = answers(m.requests[1], "call_del");
  assert.match(answer.content, /rejected/);
  assert.doesNotMatch(JSON.stringify(m.requests[1]), /ghp_0123456789/);
  assert.doesNotMatch(session.exportJson(), /ghp_0123456789/);
  assert.equal(result.decided[0].kind, "tool_error");
});

test("a resume with runCompiled(options) runs an edit with the edited arguments", async () => {
  const { m, b, session } = await paused();
  const args = { path: "old.log.1" };
  const result = await runCompiled({ budget: 4000, model: m, bridge: b.execute, tools: specs, session, approvals: { call_del: { approve: true, args } } });
  assert.equal(result.result, "Done.");
  assert.deepEqual(b.ran.at(-1), ["delete_file", args]);
  assert.deepEqual(sentArguments(m.requests[1], "call_del"), args);
  const decided = session.eventLog.events.find((e) => e.kind === "approval_decided");
  assert.deepEqual(decided.data.arguments, args);
  assert.deepEqual(decided.data.original_arguments, { path: "old.log" });
});

test("bad decisions and inputs are INVALID_ARGUMENT, recording nothing", async () => {
  const { m, b, session } = await paused();
  const base = { budget: 4000, model: m, bridge: b.execute, tools: specs, session };
  const before = session.eventLog.length;
  await rejectsWithCode(() => runCompiled(null, { ...base, approvals: { call_nope: { approve: true } } }), "INVALID_ARGUMENT");
  await rejectsWithCode(() => runCompiled(null, { ...base, approvals: { call_del: { approve: "yes" } } }), "INVALID_ARGUMENT");
  await rejectsWithCode(() => runCompiled(null, { ...base, approvals: { call_del: { approve: false, args: {} } } }), "INVALID_ARGUMENT");
  await rejectsWithCode(() => runCompiled("Something else", base), "INVALID_ARGUMENT");
  await rejectsWithCode(() => runCompiled("x", { ...base, approvals: { call_del: { approve: true } } }), "INVALID_ARGUMENT");
  await rejectsWithCode(() => runCompiled(null, { ...base, approvals: { call_del: { approve: true } }, aprovals: {} }), "INVALID_ARGUMENT");
  assert.equal(session.eventLog.length, before);
  await runCompiled(null, { ...base, approvals: { call_del: { approve: true } } });
  await rejectsWithCode(() => runCompiled(null, { ...base, approvals: { call_del: { approve: false } } }), "INVALID_ARGUMENT");
  assert.throws(() => session.decideApproval("call_del", { approve: true }), (e) => e.code === "INVALID_ARGUMENT");
});

test("needsApproval(call) marks calls that wait; a throw makes a call wait", async () => {
  const m = model();
  const b = bridge();
  const session = new Session();
  const seen = [];
  const needsApproval = (call) => {
    seen.push(call.name);
    if (call.name === "read_file") throw new Error("policy service down");
    return false;
  };
  const plain = specs.map(({ needsApproval: _, ...s }) => s);
  const result = await runCompiled("Go", { budget: 4000, model: m, bridge: b.execute, tools: plain, session, needsApproval });
  assert.deepEqual(seen.sort(), ["delete_file", "read_file"]);
  assert.deepEqual(result.pending.map((p) => p.callId), ["call_read"]);
  assert.deepEqual(b.ran.map(([n]) => n), ["delete_file"]);
});

test("a host's own loop records the pause and the decision with requestApproval / decideApproval", () => {
  const session = new Session();
  session.record("user_input", { text: "Go" });
  session.record("tool_call", { tool_name: "delete_file", call_id: "c1", arguments: { path: "x" } });
  assert.throws(() => session.requestApproval("c2"), (e) => e.code === "INVALID_ARGUMENT");
  session.requestApproval("c1");
  assert.throws(() => session.requestApproval("c1"), (e) => e.code === "INVALID_ARGUMENT");
  assert.deepEqual(session.pendingApprovals().map((p) => p.callId), ["c1"]);
  const event = session.decideApproval("c1", { approve: false, reason: "no" });
  assert.equal(event.kind, "approval_decided");
  assert.deepEqual(session.pendingApprovals(), []);
});

test("another process resumes the pause from a store, and a second decision there is superseded", { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "approvals-"));
  try {
    const { session } = await paused();
    const store = new FsArtifactStore({ baseDir: dir });
    await store.saveSession(session);
    const child = new URL("./children/approval_resume.mjs", import.meta.url).pathname;
    // Process A approves (syncing first); process B then rejects the same call, syncing before it runs it.
    const a = JSON.parse((await run(process.execPath, [child, dir, "approvals", JSON.stringify({ approve: true })])).stdout);
    assert.equal(a.stopReason, "answered");
    assert.deepEqual(a.superseded, []);
    assert.deepEqual(a.ran, ["delete_file"]);
    // B loaded the session before A's decision was saved: it is handed the stale copy.
    const b = JSON.parse((await run(process.execPath, [child, dir, "approvals", JSON.stringify({ approve: false, reason: "no" }), "stale"])).stdout);
    assert.deepEqual(b.superseded.map((s) => s.callId), ["call_del"]);
    assert.deepEqual(b.ran, []);
    assert.equal(b.answers, 1, "the request after the merge answers the call once");
    assert.doesNotMatch(b.answer, /rejected/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a needsApproval that never settles makes the call wait until the run is cancelled", async () => {
  const m = model();
  const b = bridge();
  const session = new Session();
  const controller = new AbortController();
  const needsApproval = () => {
    setTimeout(() => controller.abort(new Error("the user left")), 20);
    return new Promise(() => {});
  };
  const plain = specs.map(({ needsApproval: _, ...s }) => s);
  await rejectsWithCode(() => runCompiled("Go", { budget: 4000, model: m, bridge: b.execute, tools: plain, session, needsApproval, signal: controller.signal }), "ABORTED");
  assert.deepEqual(b.ran, [], "no call ran unasked");
  assert.deepEqual(session.pendingApprovals().map((p) => p.callId), ["call_del", "call_read"]);
});

test("a sync that throws fails the resume; the next resume carries the decision out", async () => {
  const { m, b, session } = await paused();
  const base = { budget: 4000, model: m, bridge: b.execute, tools: specs, session };
  const sync = () => {
    throw new Error("the store is down");
  };
  await rejectsWithCode(() => runCompiled(null, { ...base, approvals: { call_del: { approve: true } }, sync }), "HANDLER_FAILED");
  assert.deepEqual(b.ran.map(([n]) => n), ["read_file"]);
  await rejectsWithCode(() => runCompiled("Next", base), "INVALID_ARGUMENT");
  const result = await runCompiled(null, base);
  assert.equal(result.stopReason, "answered");
  assert.deepEqual(b.ran.map(([n]) => n), ["read_file", "delete_file"]);
});

test("orchestrateCompiled over a run that stops for approval says which calls wait, and the session resumes", async () => {
  const m = model();
  const b = bridge();
  const session = new Session();
  const out = await orchestrateCompiled({ task: "Clean up the logs", budget: 4000 }, { model: m, bridge: b.execute, tools: specs, session });
  assert.equal(out.isError, false);
  assert.equal(out.structuredContent.stop_reason, "approval");
  assert.deepEqual(out.structuredContent.pending, [{ call_id: "call_del", name: "delete_file", arguments: { path: "old.log" } }]);
  assert.match(out.content[0].text, /delete_file \(call_del\)/);
  const done = await runCompiled(null, { budget: 4000, model: m, bridge: b.execute, tools: specs, session, approvals: { call_del: { approve: true } } });
  assert.equal(done.result, "Done.");
});
