// The event bus from JS: the seed's bus semantics with JS handlers, and the
// faults a host's handlers bring (throws, rejections, never settling).
import { test } from "node:test";
import assert from "node:assert/strict";
import { EventBus } from "agent-context-compiler";

const ev = (type, n, extra = {}) => ({ type, agentId: "agent-1", sessionId: "s-1", data: { n, ...extra } });

test("handlers get the event with the binding keys and the seed's payload keys", async () => {
  const bus = new EventBus();
  const seen = [];
  bus.on("session_ended", (e) => seen.push(e));
  bus.start();
  const before = Date.now();
  assert.equal(await bus.emit({ type: "session_ended", agentId: "a", sessionId: "s", data: { episode_id: "ep-1", idle_seconds: 1800 } }), true);
  await bus.stop();
  assert.equal(seen.length, 1);
  const { timestamp, ...rest } = seen[0];
  assert.deepEqual(rest, { type: "session_ended", agentId: "a", sessionId: "s", data: { episode_id: "ep-1", idle_seconds: 1800 } });
  assert.ok(timestamp >= before && timestamp <= Date.now());
});

test("several handlers per type; a throwing or rejecting one reaches neither the others nor the bus", async () => {
  const errors = [];
  const bus = new EventBus({ onError: (error, handler, event) => errors.push([error.code, handler, event.data.n, error.message]) });
  const log = [];
  bus.on("x", function thrower() {
    throw new Error("sync boom");
  });
  bus.on("x", async function rejecter() {
    throw new TypeError("async boom");
  });
  bus.on("x", async (e) => {
    await null;
    log.push(e.data.n);
  }, "good");
  bus.start();
  for (const n of [1, 2, 3]) await bus.emit(ev("x", n));
  await bus.stop();
  assert.deepEqual(log, [1, 2, 3]);
  assert.equal(errors.length, 6);
  assert.ok(errors.every(([code]) => code === "HANDLER_FAILED"));
  assert.deepEqual(errors.slice(0, 2).map(([, h, n]) => [h, n]), [["thrower", 1], ["rejecter", 1]]);
  assert.match(errors[0][3], /sync boom/);
  const stats = bus.stats;
  assert.equal(stats.dispatched, 3);
  assert.equal(stats.handlerErrors, 6);
  assert.deepEqual(stats.handlers.good, { calls: 3, errors: 0, timeouts: 0 });
  assert.deepEqual(stats.handlers.thrower, { calls: 3, errors: 3, timeouts: 0 });
});

test("a full queue drops the event and emit resolves false, never blocking (100,000 emits)", async () => {
  const bus = new EventBus({ maxQueue: 1000 });
  const results = await Promise.all(Array.from({ length: 100_000 }, (_, n) => bus.emit(ev("x", n))));
  assert.equal(results.filter(Boolean).length, 1000);
  assert.equal(bus.pending, 1000);
  assert.deepEqual([bus.stats.emitted, bus.stats.dropped], [1000, 99_000]);
  await bus.stop();
  assert.equal(bus.pending, 0);
});

test("stop drains the queue in FIFO order while handlers are still running", async () => {
  const bus = new EventBus();
  const log = [];
  bus.on("x", async (e) => {
    await new Promise((r) => setTimeout(r, 2));
    log.push(e.data.n);
  });
  bus.start();
  for (let n = 0; n < 20; n++) bus.emit(ev("x", n));
  await bus.stop();
  assert.deepEqual(log, Array.from({ length: 20 }, (_, n) => n));
  assert.equal(bus.running, false);
});

test("the persister sees every event before its handlers; its failure is isolated", async () => {
  const order = [];
  const errors = [];
  const bus = new EventBus({ onError: (e, handler) => errors.push(handler) });
  bus.setPersister(async (e) => {
    order.push(`db:${e.type}`);
    throw new Error("db down");
  });
  bus.on("x", (e) => order.push(`h:${e.type}`));
  bus.start();
  await bus.emit(ev("x", 1));
  await bus.emit(ev("nobody", 2));
  await bus.stop();
  assert.deepEqual(order, ["db:x", "h:x", "db:nobody"]);
  assert.deepEqual(errors, ["persister", "persister"]);
  assert.equal(bus.stats.persistErrors, 2);
});

test("a handler that never settles times out (HANDLER_TIMEOUT) and the queue moves on", async () => {
  const errors = [];
  const bus = new EventBus({ handlerTimeoutMs: 20, onError: (e, handler) => errors.push([e.code, handler]) });
  const log = [];
  bus.on("x", () => new Promise(() => {}), "stuck");
  bus.on("x", (e) => log.push(e.data.n), "fine");
  bus.start();
  await bus.emit(ev("x", 1));
  await bus.emit(ev("x", 2));
  await bus.stop();
  assert.deepEqual(log, [1, 2]);
  assert.deepEqual(errors, [["HANDLER_TIMEOUT", "stuck"], ["HANDLER_TIMEOUT", "stuck"]]);
  assert.equal(bus.stats.handlerTimeouts, 2);
});

test("unsubscribe stops delivery; an onError that throws is ignored", async () => {
  const bus = new EventBus({
    onError: () => {
      throw new Error("listener broken");
    },
  });
  const log = [];
  const off = bus.on("x", (e) => log.push(e.data.n));
  bus.on("x", () => {
    throw new Error("always");
  });
  bus.start();
  await bus.emit(ev("x", 1));
  await bus.stop();
  assert.equal(off(), true);
  assert.equal(off(), false);
  bus.start();
  await bus.emit(ev("x", 2));
  await bus.stop();
  assert.deepEqual(log, [1]);
});

test("bad options, events and handlers are INVALID_ARGUMENT or NOT_SERIALIZABLE", async () => {
  for (const options of [{ maxQueue: 0 }, { maxQueue: -1 }, { maxQueue: 1.5 }, { handlerTimeoutMs: -5 }, { handlerTimeoutMs: "x" }, { onError: 3 }, 7]) {
    assert.throws(() => new EventBus(options), (e) => e.code === "INVALID_ARGUMENT", JSON.stringify(options));
  }
  const bus = new EventBus();
  assert.throws(() => bus.on("x", 42), (e) => e.code === "INVALID_ARGUMENT");
  assert.throws(() => bus.on(1, () => {}), (e) => e.code === "INVALID_ARGUMENT");
  assert.throws(() => bus.setPersister("nope"), (e) => e.code === "INVALID_ARGUMENT");
  for (const bad of [null, "x", { agentId: "a" }, { type: "x" }, { type: "x", agentId: "a", data: [1] }, { type: "x", agentId: "a", sessionId: 5 }]) {
    await assert.rejects(bus.emit(bad), (e) => e.code === "INVALID_ARGUMENT", JSON.stringify(bad));
  }
  await assert.rejects(bus.emit({ type: "x", agentId: "a", data: { f: () => 1 } }), (e) => e.code === "NOT_SERIALIZABLE");
  assert.equal(bus.stats.emitted, 0);
});
