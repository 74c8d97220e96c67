// The seed's test_session, ported, plus ids, export/import and bad input.
import { test } from "node:test";
import assert from "node:assert/strict";
import { EventLog, Session, countTokens } from "agent-context-compiler";
import { rejectsWithCode } from "./helpers.mjs";

test("event log append and filter", () => {
  const log = new EventLog();
  log.append("user_input", { text: "hello" }, { tokenEstimate: 10 });
  log.append("memory_hit", { key: "k1" }, { tokenEstimate: 5 });
  log.append("user_input", { text: "world" }, { tokenEstimate: 8 });
  assert.equal(log.events.length, 3);
  assert.equal(log.length, 3);
  assert.equal(log.totalTokens(), 23);
  const filtered = log.filter(["user_input"]);
  assert.equal(filtered.length, 2);
  assert.ok(filtered.every((e) => e.kind === "user_input"));
});

test("event log since", () => {
  const log = new EventLog();
  const e1 = log.append("user_input", { text: "a" }, { tokenEstimate: 5 });
  const e2 = log.append("tool_call", { name: "echo" }, { tokenEstimate: 10 });
  const since = log.since(e1.timestamp);
  assert.ok(since.length >= 1);
  assert.ok(since.some((e) => e.eventId === e2.eventId));
  assert.deepEqual(log.since(e2.timestamp + 1), []);
});

test("session wraps evidence pack", () => {
  const session = new Session();
  assert.ok(session.sessionId);
  session.record("user_input", { text: "test" }, { tokenEstimate: 7 });
  assert.equal(session.eventLog.events.length, 1);
  const pack = session.toEvidencePack();
  assert.equal(pack.sessionId, session.sessionId);
  assert.equal(pack.entries.length, 1);
  assert.equal(pack.entries[0].kind, "input");
});

test("events have the seed's fields, time-sortable unique ids and counted estimates", () => {
  const s = new Session({ sessionId: "ids" });
  const events = [];
  for (let i = 0; i < 300; i++) events.push(s.record("user_input", { text: `message ${i}` }));
  const ids = events.map((e) => e.eventId);
  assert.deepEqual([...ids].sort(), ids);
  assert.equal(new Set(ids).size, 300);
  assert.deepEqual(Object.keys(events[0]), ["eventId", "timestamp", "kind", "data", "tokenEstimate"]);
  assert.equal(events[0].tokenEstimate, countTokens("message 0"), "estimated by the default counter");
  assert.ok(Math.abs(events[0].timestamp - Date.now()) < 60_000);
});

test("the seed's words counter can be chosen", () => {
  const s = new Session({ tokenCounter: "words" });
  assert.equal(s.record("user_input", "hello world").tokenEstimate, 3);
});

test("export and import round-trip exactly", () => {
  const s = new Session({ sessionId: "rt" });
  s.record("user_input", { text: "héllo", z: 1, a: [1.5, null, true] });
  s.record("tool_success", { tool: "calc", result: { b: 2, a: 1 } }, { tokenEstimate: 3 });
  s.record("custom", "just a string");
  const json = s.exportJson();
  const back = Session.importJson(json);
  assert.equal(back.exportJson(), json);
  assert.equal(back.sessionId, "rt");
  assert.deepEqual(back.eventLog.events, s.eventLog.events);
  const next = back.record("user_input", "more");
  assert.ok(next.eventId > s.eventLog.events.at(-1).eventId);
});

test("a malformed import is an error naming what is wrong, never a partial session", async () => {
  const good = JSON.parse(new Session({ sessionId: "x" }).exportJson());
  await rejectsWithCode(() => Session.importJson("{oops"), "INVALID_SESSION_IMPORT", "not valid JSON");
  await rejectsWithCode(() => Session.importJson(JSON.stringify({ ...good, version: 9 })), "INVALID_SESSION_IMPORT", "$.version");
  const bad = { ...good, events: [{ eventId: "a", timestamp: 1, kind: "user_input", data: {}, tokenEstimate: -2 }] };
  await rejectsWithCode(() => Session.importJson(JSON.stringify(bad)), "INVALID_SESSION_IMPORT", "$.events[0].tokenEstimate");
  await rejectsWithCode(() => Session.importJson(42), "INVALID_ARGUMENT");
});

test("bad token estimates are rejected with INVALID_TOKEN_COUNT and nothing is recorded", async () => {
  const s = new Session();
  for (const bad of [NaN, -1, 1.5, Infinity, "7"]) {
    await rejectsWithCode(() => s.record("user_input", { text: "x" }, { tokenEstimate: bad }), "INVALID_TOKEN_COUNT");
  }
  assert.equal(s.eventLog.length, 0);
});

test("data that is not JSON is rejected with a path, and nothing is recorded", async () => {
  const s = new Session();
  const cyclic = { a: {} };
  cyclic.a.self = cyclic;
  const cases = [
    [{ f() {} }, "data.f: a function"],
    [{ n: NaN }, "data.n: a non-finite number"],
    [{ big: 10n }, "data.big: a bigint"],
    [{ s: Symbol("x") }, "data.s: a symbol"],
    [cyclic, "data.a.self: a cyclic reference"],
    [{ m: new Map() }, "data.m: a Map"],
    [[1, undefined], "data[1]: undefined"],
    [undefined, "data: undefined"],
  ];
  for (const [data, message] of cases) {
    await rejectsWithCode(() => s.record("custom", data), "NOT_SERIALIZABLE", message);
  }
  let deep = [];
  for (let i = 0; i < 500; i++) deep = [deep];
  await rejectsWithCode(() => s.record("custom", deep), "NOT_SERIALIZABLE", "deeper than 100");
  assert.equal(s.eventLog.length, 0);
  // JSON.stringify semantics: undefined properties are skipped, toJSON is used.
  const e = s.record("custom", { a: 1, b: undefined, when: new Date(0) });
  assert.deepEqual(e.data, { a: 1, when: "1970-01-01T00:00:00.000Z" });
});

test("kind must be a non-empty string", async () => {
  const s = new Session();
  await rejectsWithCode(() => s.record("", {}), "INVALID_ARGUMENT");
  await rejectsWithCode(() => s.record(7, {}), "INVALID_ARGUMENT");
});

test("the returned event is the stored one: data in its JSON form, strings shared", () => {
  const s = new Session();
  const content = "x".repeat(5000);
  const inputs = [
    { role: "tool", content },
    { a: 1, b: undefined, when: new Date(0), nested: [{ n: -0 }, 1.5, 2 ** 60, "\ud800"] },
    JSON.parse('{"__proto__": {"p": 1}, "k": "v"}'),
    ["é😀", null, true, false, { "\udc00": 1 }],
    "just text",
    { toJSON: () => ({ replaced: true }) },
  ];
  for (const data of inputs) {
    const event = s.record("custom", data);
    const stored = s.eventLog.events.at(-1);
    assert.deepStrictEqual(event, stored);
  }
  assert.equal(s.record("tool_success", { output: content }).data.output, content);
});

test("a toJSON that records into the session while its data is walked", () => {
  const s = new Session();
  const data = { toJSON: () => (s.record("note", { inner: [1, 2, 3] }), { outer: "x".repeat(300) }) };
  const outer = s.record("custom", data);
  assert.deepEqual(outer.data, { outer: "x".repeat(300) });
  assert.deepEqual(s.eventLog.events.map((e) => e.kind), ["note", "custom"]);
  assert.deepEqual(s.eventLog.events[0].data, { inner: [1, 2, 3] });
});

test("values that throw when read are NOT_SERIALIZABLE with their path, and the next record works", async () => {
  const s = new Session();
  const cases = [
    [{ a: { get b() { throw new Error("boom"); } } }, "data.a: an object whose getter threw"],
    [{ list: new Proxy([], { get(t, k) { if (k === "length") throw 1; return t[k]; } }) }, "data.list: an object whose length threw"],
    [new Proxy({}, { ownKeys() { throw new Error("no"); } }), "data: an object whose key listing threw"],
    [{ x: { toJSON() { throw new Error("bad date"); } } }, "data.x: a value whose toJSON threw (bad date)"],
    [[0, [1, new Set()]], "data[1][1]: a Map, Set, Promise or binary buffer"],
    [{ u: new Uint8Array(2) }, "data.u: a Map, Set, Promise or binary buffer"],
  ];
  for (const [data, message] of cases) {
    await rejectsWithCode(() => s.record("custom", data), "NOT_SERIALIZABLE", message);
  }
  assert.equal(s.eventLog.length, 0);
  assert.deepEqual(s.record("custom", { ok: [1] }).data, { ok: [1] });
});

test("garbage handed to the internal tape entry point is INVALID_ARGUMENT, never a trap", async () => {
  const s = new Session();
  const bad = [
    [new Float64Array([9]), ""],
    [new Float64Array([4, 10]), "short"],
    [new Float64Array([5, 1e9]), ""],
    [new Float64Array([6, 1, 3, 0]), "k"],
    [new Float64Array([]), ""],
    [new Float64Array([0]), 42],
  ];
  for (const [tape, payload] of bad) {
    await rejectsWithCode(() => s.__recordTape("custom", tape, payload, undefined), "INVALID_ARGUMENT", "malformed encoded event data");
  }
  assert.equal(s.eventLog.length, 0);
  assert.equal(s.record("custom", 1).data, 1);
});
