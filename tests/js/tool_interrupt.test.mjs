// The seed's test_tool_events and test_tool_interrupt, ported, plus the
// cases the issue names: never-settling promises, throws of non-Errors,
// concurrent calls, late results.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ContextCompiler, HistorySelector, MemoryArtifactStore, PerceptionAligner, SchemaRegistry, Session, ToolEvent,
  ToolEventKind, ToolInterruptHandler,
} from "agent-context-compiler";
import { gatedProcessor, rejectsWithCode } from "./helpers.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function setup(bridge, extra = {}) {
  const session = new Session();
  const handler = new ToolInterruptHandler({ bridge, normalizer: new PerceptionAligner(new SchemaRegistry()), session, ...extra });
  return { session, handler, kinds: () => session.eventLog.events.map((e) => e.kind) };
}

test("tool event kinds", () => {
  assert.equal(ToolEventKind.CALL, "tool_call");
  assert.equal(ToolEventKind.SUCCESS, "tool_success");
  assert.equal(ToolEventKind.ERROR, "tool_error");
  assert.equal(ToolEventKind.TIMEOUT, "tool_timeout");
});

test("tool event creation", async () => {
  const evt = ToolEvent.create({ kind: ToolEventKind.SUCCESS, toolName: "echo", arguments: { text: "hello" }, result: "hello", latencyMs: 42 });
  assert.equal(evt.kind, ToolEventKind.SUCCESS);
  assert.equal(evt.toolName, "echo");
  assert.equal(evt.result, "hello");
  assert.equal(evt.error, null);
  assert.equal(evt.latencyMs, 42);
  assert.ok(evt.eventId);
  const err = ToolEvent.create({ kind: ToolEventKind.ERROR, toolName: "fail_tool", arguments: {}, error: "Connection refused", latencyMs: 100 });
  assert.equal(err.result, null);
  assert.equal(err.error, "Connection refused");
  await rejectsWithCode(() => ToolEvent.create({ kind: "nope", toolName: "x" }), "INVALID_ARGUMENT");
});

test("handler success", async () => {
  const { handler, kinds } = setup({ execute: async (name, args) => `echo: ${args.text}` });
  const event = await handler.call("echo", { text: "hello" });
  assert.ok(event instanceof ToolEvent);
  assert.equal(event.kind, ToolEventKind.SUCCESS);
  assert.equal(event.result, "echo: hello");
  assert.equal(event.error, null);
  assert.ok(event.latencyMs >= 0);
  assert.deepEqual(kinds(), ["tool_call", "tool_success"]);
  assert.equal(event.normalized.summaryConcise, "echo: hello");
});

test("handler error: Error, string, undefined and objects thrown or rejected", async () => {
  for (const [bridge, message] of [
    [async () => { throw new Error("boom"); }, "boom"],
    [() => { throw "a string"; }, "a string"],
    [async () => { throw undefined; }, "undefined"],
    [() => Promise.reject({ code: 42 }), '{"code":42}'],
    [async () => 10n, "bigint"],
  ]) {
    const { handler, kinds } = setup(bridge);
    const event = await handler.call("fail_tool", {});
    assert.equal(event.kind, ToolEventKind.ERROR, message);
    assert.ok(event.error.includes(message), `${event.error} should include ${message}`);
    assert.equal(event.result, null);
    assert.deepEqual(kinds(), ["tool_call", "tool_error"]);
  }
});

test("handler timeout: a never-settling promise times out and its signal is aborted", async () => {
  let seen;
  const { handler, kinds } = setup({ execute: (name, args, { signal }) => { seen = signal; return new Promise(() => {}); } });
  const event = await handler.call("slow_tool", {}, { timeoutMs: 50 });
  assert.equal(event.kind, ToolEventKind.TIMEOUT);
  assert.match(event.error, /timed out/);
  assert.ok(seen instanceof AbortSignal);
  assert.equal(seen.aborted, true);
  assert.match(String(seen.reason?.message ?? seen.reason), /timed out/);
  assert.deepEqual(kinds(), ["tool_call", "tool_timeout"]);
});

test("a result arriving after its timeout is ignored", async () => {
  const { handler, kinds } = setup(async () => { await sleep(120); return "too late"; });
  const event = await handler.call("late", {}, { timeoutMs: 20 });
  assert.equal(event.kind, ToolEventKind.TIMEOUT);
  await sleep(200);
  assert.deepEqual(kinds(), ["tool_call", "tool_timeout"]);
});

test("concurrent calls: every call's events land in order", async () => {
  const { handler, session } = setup(async (name) => {
    const ms = Number(name.slice(1));
    await sleep(ms);
    if (ms === 30) throw new Error("failed");
    return name;
  });
  const events = await Promise.all(["t50", "t10", "t30", "t5", "t200"].map((n) => handler.call(n, {}, { timeoutMs: 100 })));
  assert.deepEqual(events.map((e) => e.kind), ["tool_success", "tool_success", "tool_error", "tool_success", "tool_timeout"]);
  const log = session.eventLog.events;
  assert.equal(log.length, 10);
  for (const [i, call] of log.entries()) {
    if (call.kind !== "tool_call") continue;
    const outcomes = log.filter((e) => e.data.call_id === call.eventId);
    assert.equal(outcomes.length, 1);
    assert.ok(log.indexOf(outcomes[0]) > i);
  }
});

test("large outputs are redacted and externalised; JSON results are serialised", async () => {
  const store = new MemoryArtifactStore();
  const secret = "ghp_" + "a1B2".repeat(9);
  const { handler, kinds } = setup(async () => `token=${secret}\n` + "log line ok\n".repeat(500), { artifactStore: store, externalizeThreshold: 1024 });
  const event = await handler.call("logs", {});
  assert.ok(event.artifact?.artifactId);
  assert.deepEqual(kinds(), ["tool_call", "artifact_stored", "tool_success"]);
  const stored = new TextDecoder().decode(await store.retrieve(event.artifact.artifactId));
  assert.ok(!stored.includes(secret));
  const json = setup(async () => ({ result: 42, api_key: "k-123456789" }));
  const e = await json.handler.call("calc", {});
  assert.equal(e.normalized.isJson, true);
  assert.equal(e.normalized.data.api_key, "[REDACTED:secret-key]");
});

test("bad options are clear errors", async () => {
  const session = new Session();
  await rejectsWithCode(() => new ToolInterruptHandler({ bridge: 42, session }), "INVALID_ARGUMENT", "bridge");
  await rejectsWithCode(() => new ToolInterruptHandler({ bridge: () => 1, session: {} }), "INVALID_ARGUMENT", "Session");
  const { handler } = setup(() => "x");
  await rejectsWithCode(() => handler.call("t", {}, { timeoutMs: -1 }), "INVALID_ARGUMENT", "timeoutMs");
  await rejectsWithCode(() => handler.call(5, {}), "INVALID_ARGUMENT", "name");
});

test("a tool finishing while a compile of its session runs resolves to its event", async () => {
  const { session, handler, kinds } = setup(async () => "result text");
  session.record("user_input", "go");
  const { processor: slow, inside, release } = gatedProcessor();
  const running = new ContextCompiler({ processors: [new HistorySelector(), slow] }).compile(session, 500);
  await inside;
  const evt = await handler.call("t", { q: 1 });
  assert.equal(evt.kind, "tool_success");
  assert.equal(evt.result, "result text");
  assert.deepEqual(kinds(), ["user_input", "tool_call", "tool_success"]);
  release();
  await running;
  const ctx = await new ContextCompiler({ processors: [new HistorySelector()] }).compile(session, 500);
  assert.ok(JSON.stringify(ctx.toMessages()).includes("result text"));
});

test("secrets in a tool's error and arguments are redacted before they are stored", async () => {
  const token = "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYz123";
  let seen;
  const { session, handler } = setup(async (_name, args) => {
    seen = args;
    throw new Error(`401 Bad credentials for ${token}`);
  });
  const args = { repo: "o/r", auth: { password: "hunter2hunter2" } };
  const evt = await handler.call("gh", args);
  assert.deepEqual(seen, args);
  assert.equal(evt.kind, "tool_error");
  for (const text of [session.exportJson(), evt.error, JSON.stringify(evt.arguments)]) {
    assert.ok(!text.includes(token), text);
    assert.ok(!text.includes("hunter2"), text);
  }
  assert.match(evt.error, /^401 Bad credentials for \[REDACTED:github-token\]$/);
});

test("a timeout beyond a host timer's range (2^31 ms) does not fire early", async () => {
  const { handler } = setup(async () => {
    await sleep(40);
    return "late but in time";
  });
  for (const timeoutMs of [2 ** 31, 2 ** 31 + 5, 2 ** 40]) {
    const evt = await handler.call("slow", {}, { timeoutMs });
    assert.equal(evt.kind, "tool_success", `timeoutMs ${timeoutMs}`);
  }
});

test("a tool returning bytes: text bytes are text, other bytes go to the artifact store (never base64)", async () => {
  const { readFile } = await import("node:fs/promises");
  const { fileURLToPath } = await import("node:url");
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...Array.from({ length: 3000 }, (_, i) => (i * 7) & 0xff)]);
  const store = new MemoryArtifactStore();
  const readme = fileURLToPath(new URL("../../package.json", import.meta.url));
  const tools = {
    read_file: () => readFile(readme),
    bytes: () => png,
    buffer: () => png.slice().buffer,
  };
  const { handler, session } = setup((name) => tools[name](), { artifactStore: store });
  const file = await handler.call("read_file", {});
  assert.equal(file.kind, "tool_success");
  assert.ok(file.artifact === null || file.artifact === undefined || file.artifact.mimeType !== "image/png");
  assert.ok(JSON.stringify(session.eventLog.events).includes("agent-context-compiler") || file.artifact, "normalised as text");
  for (const name of ["bytes", "buffer"]) {
    const e = await handler.call(name, {});
    assert.equal(e.kind, "tool_success", name);
    assert.equal(e.artifact.mimeType, "image/png");
    assert.deepEqual(await store.retrieve(e.artifact.artifactId), png);
    assert.match(e.result, /^\[binary output: 3008 bytes \(image\/png\), stored as artifact [0-9a-f]{64}\]$/);
  }
  const recorded = JSON.stringify(session.eventLog.events);
  assert.ok(!recorded.includes("iVBOR"), "no base64 in the session");
  assert.ok(recorded.length < 20_000, "no bytes in the session");
});

test("a large output is normalised in slices: timers fire meanwhile, and normalisation counts inside timeoutMs", async () => {
  // `grep -rn "BEGIN RSA PRIVATE KEY"` output with tokens: ~8 MB.
  const lines = [];
  for (let i = 0, n = 0; n < 8_000_000; i++) {
    const l = `src/keys/server${i}.pem:1:-----BEGIN RSA PRIVATE KEY-----\nlog ${i} token=ghp_${"a1B2".repeat(9)} ok\n`;
    lines.push(l);
    n += l.length;
  }
  const big = lines.join("");
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  try {
    const { handler } = setup(() => big);
    const done = await handler.call("grep", {}, { timeoutMs: 120_000 });
    assert.equal(done.kind, "tool_success");
    assert.ok(!done.result.includes("ghp_") && done.result.includes("[REDACTED:"), "every slice redacted");
    assert.ok(ticks > 0, "the event loop ran while the output was normalised");
    const { handler: late, session } = setup(() => big);
    const timedOut = await late.call("grep", {}, { timeoutMs: 2 });
    assert.equal(timedOut.kind, "tool_timeout", "normalisation counts inside timeoutMs");
    assert.ok(!JSON.stringify(session.eventLog.events).includes("ghp_"));
  } finally {
    clearInterval(timer);
  }
});

test("handler.call({ callId }) records the provider's id on the call and its outcome, and requests pair them under it", async () => {
  const { session, handler } = setup(async (name, args) => `disk ${args.path} 92% used`);
  session.record("user_input", "Check the disk.");
  const ok = await handler.call("df", { path: "/data" }, { callId: "call_7Yx2" });
  assert.equal(ok.kind, ToolEventKind.SUCCESS);
  const failing = setup(async () => {
    throw new Error("no such tool");
  });
  const [call, outcome] = session.eventLog.events.slice(-2);
  assert.deepEqual([call.kind, call.data.call_id], ["tool_call", "call_7Yx2"]);
  assert.deepEqual([outcome.kind, outcome.data.call_id], ["tool_success", "call_7Yx2"]);
  const ctx = await new ContextCompiler({ layout: "zoned", processors: [new HistorySelector()] }).compile(session, 4000);
  const messages = ctx.toMessages({ format: "openai" });
  const assistant = messages.find((m) => m.tool_calls);
  assert.equal(assistant.tool_calls[0].id, "call_7Yx2");
  assert.equal(messages.find((m) => m.role === "tool").tool_call_id, "call_7Yx2");
  // Without one, the outcome names the call by its event id, as before.
  await failing.handler.call("df", {});
  const [plainCall, plainOutcome] = failing.session.eventLog.events;
  assert.equal(plainOutcome.data.call_id, plainCall.eventId);
  for (const callId of ["", 7, {}]) {
    await rejectsWithCode(() => handler.call("df", {}, { callId }), "INVALID_ARGUMENT");
  }
  ctx.free();
});
