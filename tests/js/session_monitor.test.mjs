// The session timeout monitor from JS: a hand-driven clock and
// checkTimeouts(), the real loop with a short interval, and bad options.
import { test } from "node:test";
import assert from "node:assert/strict";
import { EventBus, Session, SessionTimeoutMonitor } from "agent-context-compiler";

const MIN = 60_000;

test("idle sessions end with their transcript; sleep starts when none is left", async () => {
  let now = 1_700_000_000_000;
  const clock = { now: () => now };
  const bus = new EventBus();
  const ended = [];
  bus.on("session_ended", (e) => ended.push(e));
  bus.on("sleep_started", (e) => ended.push(e));
  const monitor = new SessionTimeoutMonitor({ bus, clock });
  bus.start();
  await bus.emit({ type: "message_received", agentId: "nous", sessionId: "s1", data: { text: "hello there", user_id: "u-1", episode_id: "ep-9" } });
  await bus.emit({ type: "turn_completed", agentId: "nous", sessionId: "s1", data: { response: "a".repeat(600) } });
  await bus.stop();
  assert.equal(monitor.tracked, 1);
  now += 29 * MIN;
  assert.deepEqual(monitor.checkTimeouts(), []);
  now += 92 * MIN;
  const out = monitor.checkTimeouts();
  assert.deepEqual(out.map((e) => [e.type, e.sessionId]), [["session_ended", "s1"], ["sleep_started", null]]);
  assert.deepEqual(
    { ...out[0].data },
    { reason: "idle_timeout", idle_seconds: 121 * 60, episode_id: "ep-9", transcript: `User: hello there\n\nAssistant: ${"a".repeat(500)}`, user_id: "u-1", user_display_name: null },
  );
  assert.equal(out[0].timestamp, now);
  assert.equal(monitor.tracked, 0);
  bus.start();
  await bus.stop();
  assert.deepEqual(ended.map((e) => e.type), ["session_ended", "sleep_started"]);
});

test("start() checks on its own every checkIntervalMs, and stop() leaves no timer behind", async () => {
  const bus = new EventBus();
  const monitor = new SessionTimeoutMonitor({ bus, sessionIdleTimeoutMs: 30, sleepTimeoutMs: 1e9, checkIntervalMs: 10 });
  const ended = new Promise((resolve) => bus.on("session_ended", resolve));
  bus.start();
  await bus.emit({ type: "turn_completed", agentId: "a", sessionId: "s", data: {} });
  monitor.start();
  monitor.start(); // a second start does not add a loop
  const e = await ended;
  assert.equal(e.data.reason, "idle_timeout");
  monitor.stop();
  await bus.stop();
  // The test runner would hang on a leftover interval timer; none is left.
});

test("a clock whose now() throws falls back to Date.now; bad options are INVALID_ARGUMENT", () => {
  const bus = new EventBus();
  const m = new SessionTimeoutMonitor({ bus, clock: { now: () => { throw new Error("broken clock"); } } });
  assert.deepEqual(m.checkTimeouts(), []);
  for (const options of [
    {},
    { bus: {} },
    { bus: 1 },
    { bus, sessionIdleTimeoutMs: 0 },
    { bus, sleepTimeoutMs: -1 },
    { bus, checkIntervalMs: "10" },
    { bus, checkIntervalMs: Infinity },
    { bus, clock: 5 },
  ]) {
    assert.throws(() => new SessionTimeoutMonitor(options), (e) => e.code === "INVALID_ARGUMENT", JSON.stringify(options));
  }
  assert.throws(() => new SessionTimeoutMonitor(), (e) => e.code === "INVALID_ARGUMENT");
});

test("a session attached to the bus feeds the monitor by itself", async () => {
  let now = Date.now();
  const bus = new EventBus();
  const seen = [];
  bus.on("message_received", (e) => seen.push(e));
  bus.on("turn_completed", (e) => seen.push(e));
  const monitor = new SessionTimeoutMonitor({ bus, clock: { now: () => now } });
  const session = new Session({ sessionId: "chat-1" });
  session.attachBus(bus, { agentId: "nous", userId: "u-7", userDisplayName: "Ana", episodeId: "ep-3" });
  const input = session.record("user_input", "Which region do we deploy to?");
  session.record("tool_success", { tool: "lookup", result: "eu-west-3" });
  session.record("assistant_output", { text: "b".repeat(700) });
  bus.start();
  await bus.stop();
  assert.deepEqual(seen.map((e) => [e.type, e.agentId, e.sessionId]), [["message_received", "nous", "chat-1"], ["turn_completed", "nous", "chat-1"]]);
  assert.deepEqual(seen[0].data, { text: "Which region do we deploy to?", event_id: input.eventId, user_id: "u-7", user_display_name: "Ana", episode_id: "ep-3" });
  assert.equal(seen[0].timestamp, input.timestamp);
  now += 31 * MIN;
  const [ended] = monitor.checkTimeouts();
  assert.equal(ended.data.transcript, `User: Which region do we deploy to?\n\nAssistant: ${"b".repeat(500)}`);
  assert.deepEqual([ended.data.user_id, ended.data.episode_id], ["u-7", "ep-3"]);
  session.detachBus();
  session.record("user_input", "more");
  assert.equal(bus.pending, 1, "only the monitor's session_ended");
  assert.throws(() => session.attachBus({}), (e) => e.code === "INVALID_ARGUMENT");
  assert.throws(() => session.attachBus(bus, { userId: 5 }), (e) => e.code === "INVALID_ARGUMENT");
});

test("attachBus takes any object with tryEmit; a throwing tryEmit never fails a record", () => {
  const got = [];
  const session = new Session({ sessionId: "custom" });
  session.attachBus({ tryEmit: (e) => got.push(e) > 0 }, { agentId: "a" });
  const input = session.record("user_input", "hi");
  session.record("tool_call", { tool: "t" });
  assert.deepEqual(got, [
    { type: "message_received", agentId: "a", sessionId: "custom", data: { text: "hi", event_id: input.eventId }, timestamp: input.timestamp },
  ]);
  session.attachBus({
    tryEmit() {
      throw new Error("bus down");
    },
  });
  assert.equal(session.record("user_input", "still recorded").kind, "user_input");
  assert.equal(session.eventLog.length, 3);
  assert.throws(() => session.attachBus({ emit() {} }), (e) => e.code === "INVALID_ARGUMENT" && /tryEmit/.test(e.message));
});

test("emit and tryEmit take an optional timestamp; a bad one is INVALID_ARGUMENT", async () => {
  const bus = new EventBus();
  const seen = [];
  bus.on("t", (e) => seen.push(e.timestamp));
  const before = Date.now();
  assert.equal(bus.tryEmit({ type: "t", agentId: "a", timestamp: 1234.5 }), true);
  assert.equal(await bus.emit({ type: "t", agentId: "a" }), true);
  for (const timestamp of ["soon", Infinity, {}]) {
    assert.throws(() => bus.tryEmit({ type: "t", agentId: "a", timestamp }), (e) => e.code === "INVALID_ARGUMENT" && /event\.timestamp/.test(e.message), String(timestamp));
  }
  bus.start();
  await bus.stop();
  assert.equal(seen[0], 1234.5);
  assert.ok(seen[1] >= before);
  const full = new EventBus({ maxQueue: 1 });
  assert.deepEqual([full.tryEmit({ type: "t", agentId: "a" }), full.tryEmit({ type: "t", agentId: "a" })], [true, false]);
});
