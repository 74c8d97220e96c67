// The seed's test_session, ported, plus ids, export/import and bad input.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ContextCompiler, EventLog, HistorySelector, Session, countTokens } from "agent-context-compiler";
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

test("record's and append's options are read once, and bad ones are refused with Rust's messages", async () => {
  for (const make of [() => new Session(), () => new EventLog()]) {
    const target = make();
    const add = (kind, data, options) => (target instanceof Session ? target.record(kind, data, options) : target.append(kind, data, options));
    let reads = 0;
    const counted = {
      get tokenEstimate() {
        reads++;
        return 42;
      },
    };
    assert.equal(add("user_input", { text: "x" }, counted).tokenEstimate, 42);
    assert.equal(reads, 1, "a getter that answers is read once");
    assert.equal(add("user_input", { text: "x" }, { tokenEstimate: -0 }).tokenEstimate, 0);
    assert.equal(add("user_input", { text: "x" }, { tokenEstimate: null }).tokenEstimate, countTokens("x"));
    assert.equal(add("user_input", { text: "x" }, {}).tokenEstimate, countTokens("x"));
    assert.equal(add("user_input", { text: "x" }, Object.create({ tokenEstimate: 9 })).tokenEstimate, 9, "an inherited option is an option");
    for (const bad of ["x", 5, true]) {
      await rejectsWithCode(() => add("user_input", { text: "x" }, bad), "INVALID_ARGUMENT", "options must be an object");
    }
    const throwing = {
      get tokenEstimate() {
        throw new Error("no");
      },
    };
    await rejectsWithCode(() => add("user_input", { text: "x" }, throwing), "INVALID_ARGUMENT", "options.tokenEstimate could not be read");
    await rejectsWithCode(() => add("user_input", { text: "x" }, { tokenEstimate: 2 ** 53 }), "INVALID_TOKEN_COUNT", `tokenEstimate must be a non-negative integer (got ${2 ** 53})`);
    // Data that is not JSON is refused before the options are read.
    let late = 0;
    const watched = {
      get tokenEstimate() {
        late++;
        return 1;
      },
    };
    await rejectsWithCode(() => add("user_input", { f() {} }, watched), "NOT_SERIALIZABLE");
    assert.equal(late, 0);
    assert.equal(target.length ?? target.eventLog.length, 5);
  }
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

test("garbage in the record buffers is INVALID_ARGUMENT, never a trap", async () => {
  // The internals js/record.js writes through (crates/npm-wasm/src/record_buffers.rs).
  const glue = (await import("../../pkg/entry-internals.js")).glue;
  const s = new Session();
  s.record("warm", 1); // the buffers exist from the first record on
  const write = (tape, bytes) => {
    const tapeAt = glue.__recordTapeBuffer(1024);
    const textAt = glue.__recordTextBuffer(4096);
    const buffer = glue.__memory().buffer;
    new Float64Array(buffer, tapeAt, tape.length).set(tape);
    new Uint8Array(buffer, textAt, bytes.length).set(bytes);
  };
  const ascii = (t) => [...t].map((c) => c.charCodeAt(0));
  const bad = [
    // [tape, text bytes, kindUnits, tapeLength, textLength]
    [[9], ascii("k"), 1, 1, 1, "an unknown tag"],
    [[4, 10], ascii("kshort"), 1, 2, 6, "a length out of range"],
    [[4, 1], [0x6b, 0xf0, 0x9f, 0x98, 0x80], 1, 2, 5, "a string length"],
    [[5, 1e9], ascii("k"), 1, 2, 1, "a length out of range"],
    [[6, 1, 3, 0], ascii("kk"), 1, 4, 2, "malformed"],
    [[], ascii("k"), 1, 0, 1, "the tape ends early"],
    [[0], ascii("k"), 5, 1, 1, "the kind's length"],
    [[0], [0x6b, 0xff, 0xfe], 1, 1, 3, "not UTF-8"],
    [[0], [0xf0, 0x9f, 0x98, 0x80], 1, 1, 4, "the kind's length"],
    [[0], ascii("k"), 1, 1e9, 1, "the tape is longer than its buffer"],
    [[0], ascii("k"), 1, 1, 1e9, "the text is longer than its buffer"],
  ];
  for (const [tape, bytes, kindUnits, tapeLength, textLength, message] of bad) {
    write(tape, bytes);
    await rejectsWithCode(() => s.__recordBuffered(undefined, kindUnits, tapeLength, textLength, -1, true, undefined), "INVALID_ARGUMENT", message);
    // The entry without JS values checks them all the same.
    write(tape, bytes);
    await rejectsWithCode(() => s.__recordRead(kindUnits, tapeLength, textLength, -1, true, Date.now()), "INVALID_ARGUMENT", message);
  }
  await rejectsWithCode(() => s.__recordBuffered(42, -1, 0, 0, -1, true, undefined), "INVALID_ARGUMENT", "kind must be a string (got 42)");
  // An estimate handed in that is not a count is refused as one from options is.
  write([0], ascii("k"));
  await rejectsWithCode(() => s.__recordBuffered(undefined, 1, 1, 1, 2.5, true, undefined), "INVALID_TOKEN_COUNT", "tokenEstimate must be a non-negative integer (got 2.5)");
  write([0], ascii("k"));
  await rejectsWithCode(() => s.__recordRead(1, 1, 1, 2.5, true, Date.now()), "INVALID_TOKEN_COUNT", "tokenEstimate must be a non-negative integer (got 2.5)");
  assert.equal(s.eventLog.length, 1);
  assert.equal(s.record("custom", 1).data, 1);
});

test("a record is stamped with Date.now() as record read it before calling in, and only that record", async () => {
  const glue = (await import("../../pkg/entry-internals.js")).glue;
  const s = new Session();
  const before = Date.now();
  const first = s.record("user_input", { text: "hi" });
  assert.ok(first.timestamp >= before && first.timestamp <= Date.now());
  const write = (tape, bytes) => {
    const buffer = glue.__memory().buffer;
    new Float64Array(buffer, glue.__recordTapeBuffer(1024), tape.length).set(tape);
    new Uint8Array(buffer, glue.__recordTextBuffer(4096), bytes.length).set(bytes);
  };
  // The kind "k" and null data, stamped at the reading handed in.
  const later = Date.now() + 3_600_000;
  write([0], [0x6b]);
  s.__recordRead(1, 1, 1, -1, true, later);
  assert.equal(s.eventLog.events.at(-1).timestamp, later);
  // A reading a failed record did not use is forgotten with it.
  write([9], [0x6b]);
  assert.throws(() => s.__recordRead(1, 1, 1, -1, true, later + 1000), { code: "INVALID_ARGUMENT" });
  // recordUsage reads the session's clock itself: a reading kept would stamp it.
  s.recordUsage({ inputTokens: 10 });
  assert.equal(s.eventLog.events.at(-1).timestamp, later, "the failed record's reading is not used");
  assert.equal(s.record("user_input", { text: "again" }).timestamp, later, "never earlier than the last event");
  // A reading that is not a time stamps as the clock's would (0, then the last event's).
  write([0], [0x6b]);
  s.__recordRead(1, 1, 1, -1, true, NaN);
  assert.equal(s.eventLog.events.at(-1).timestamp, later);
  s.free();
});

test("a patched Date.now that records meanwhile leaves the outer record's data intact", () => {
  const s = new Session();
  const other = new Session();
  const real = Date.now;
  let inner = 0;
  Date.now = () => {
    if (inner++ === 0) other.record("user_input", { text: "from inside Date.now", n: [1, 2, 3] });
    return { valueOf: () => real() };
  };
  try {
    const event = s.record("user_input", { text: "the outer record", list: ["a", "b"] });
    assert.deepEqual(event.data, { text: "the outer record", list: ["a", "b"] });
    assert.deepEqual(s.eventLog.events.at(-1).data, event.data);
  } finally {
    Date.now = real;
  }
  assert.equal(other.eventLog.events.at(-1).data.text, "from inside Date.now");
  s.free();
  other.free();
});

test("strings of every length and alphabet cross intact, however the buffers grow", () => {
  const s = new Session();
  const long = (unit, n) => unit.repeat(n);
  const cases = [
    ["événement", { a: long("é", 300), b: "x", c: long("😀", 20_000), d: long("y", 255) }],
    ["custom", [long("a", 256), "\ud800", long("\udc00z", 300), "", long("中", 5000) + "\ud83d"]],
    ["custom", { [long("k", 400)]: long("v", 70_000), "é": [long("😀", 1), long("b", 1000)] }],
    ["tool_success", { output: long("0123456789", 300_000) }],
    ["custom", "x"],
  ];
  for (const [kind, data] of cases) {
    const event = s.record(kind, data);
    assert.equal(event.kind, kind);
    assert.deepStrictEqual(event, s.eventLog.events.at(-1));
    // Lone surrogates are stored as U+FFFD, as UTF-8 has them.
    assert.equal(JSON.stringify(event.data), JSON.stringify(data).replace(/\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])|(?<!\\ud[89ab][0-9a-f]{2})\\ud[c-f][0-9a-f]{2}/g, "\ufffd"));
    assert.match(event.eventId, /^[0-9a-f]{12}-[0-9a-f]{12}$/);
  }
  assert.equal(s.eventLog.events[3].tokenEstimate, countTokens("0123456789".repeat(300_000)));
});

test("records and counts stay right after the memory grows under the buffers' views", async () => {
  // Growing the memory detaches the views js/text-buffers.js keeps of the
  // buffers; it notices by their length, not by the memory's buffer.
  const glue = (await import("../../pkg/entry-internals.js")).glue;
  const s = new Session();
  const first = s.record("user_input", { content: "before the growth" });
  const memory = glue.__memory();
  const before = memory.buffer;
  memory.grow(2);
  assert.equal(before.byteLength, 0, "the old buffer is detached");
  const second = s.record("user_input", { content: "after the growth, ".repeat(20) });
  assert.deepStrictEqual(s.eventLog.events, [first, second]);
  assert.equal(second.tokenEstimate, countTokens("after the growth, ".repeat(20)));
  assert.match(second.eventId, /^[0-9a-f]{12}-[0-9a-f]{12}$/);
  memory.grow(1);
  assert.equal(countTokens("one two three"), s.record("custom", "one two three").tokenEstimate);
  // Growing while Rust records (here from a token counter it calls): the
  // answer is read through fresh views.
  const growing = new Session({ tokenCounter: (text) => (memory.grow(1), text.length) });
  const grown = growing.record("user_input", { content: "grown" });
  assert.equal(grown.tokenEstimate, 5);
  assert.deepStrictEqual(growing.eventLog.events, [grown]);
  assert.match(grown.eventId, /^[0-9a-f]{12}-[0-9a-f]{12}$/);
});

test("a counter or an options getter that records elsewhere during a record leaves both intact", () => {
  const other = new Session();
  const counter = (text) => {
    if (text.length === 500) other.record("from_counter", { seen: text.length, pad: "p".repeat(400) });
    return text.length;
  };
  const s = new Session({ tokenCounter: counter });
  const event = s.record("user_input", { content: "z".repeat(500) });
  assert.equal(event.tokenEstimate, 500);
  assert.deepEqual(event.data, { content: "z".repeat(500) });
  assert.deepStrictEqual(event, s.eventLog.events[0]);
  const options = {
    get tokenEstimate() {
      other.record("from_getter", "q".repeat(2000));
      return 7;
    },
  };
  const second = s.record("custom", { k: "w".repeat(300) }, options);
  assert.equal(second.tokenEstimate, 7);
  assert.deepStrictEqual(second, s.eventLog.events[1]);
  assert.deepEqual(other.eventLog.events.map((e) => e.kind), ["from_counter", "from_getter"]);
  assert.equal(other.eventLog.events[1].data, "q".repeat(2000));
  assert.notEqual(second.eventId, other.eventLog.events[1].eventId);
});

test("record redacts a tool event's output, error and arguments (the README's quick start records tool_success itself); { redact: false } keeps them", async () => {
  const token = "sk-proj-4fGh8JkL2mN6pQ9rStUvWxYz0123456789abcdefAB";
  const session = new Session({ sessionId: "redacts" });
  session.record("user_input", { text: "Why did the nightly job fail?" });
  const logs = `INFO starting\nOPENAI_API_KEY=${token}\nERROR disk full\n`.repeat(30);
  const success = session.record("tool_success", { tool: "read_logs", result: logs });
  assert.ok(!JSON.stringify(success.data).includes(token), "the returned event is the recorded one");
  assert.match(success.data.result, /ERROR disk full/);
  assert.equal(success.tokenEstimate, countTokens(success.data.result), "counted after redaction");
  session.record("tool_error", { tool: "login", error: `rejected ${token}` });
  session.record("tool_call", { tool_name: "login", arguments: { apiKey: token } });
  assert.ok(!session.exportJson().includes(token));
  const ctx = await new ContextCompiler({ layout: "zoned", processors: [new HistorySelector()] }).compile(session, 32_000, { systemPrompt: "You are an SRE." });
  assert.ok(!JSON.stringify(ctx.toMessages({ format: "openai" })).includes(token));
  ctx.free();
  const kept = session.record("tool_success", { tool: "env", result: `key=${token}` }, { redact: false });
  assert.equal(kept.data.result, `key=${token}`);
  assert.throws(() => session.record("tool_success", { result: "x" }, { redact: "no" }), { code: "INVALID_ARGUMENT" });
  // A user's own words, and an event log's append, are recorded as given.
  assert.equal(session.record("user_input", { text: token }).data.text, token);
  assert.equal(session.eventLog.append("tool_success", { result: token }).data.result, token);
  session.free();
});

test("record reads { redact, tokenEstimate } once, in JavaScript, with Rust's defaults and messages", () => {
  const token = "sk-proj-4fGh8JkL2mN6pQ9rStUvWxYz0123456789abcdefAB";
  const session = new Session();
  const result = `key=${token}`;
  const recorded = (options) => session.record("tool_success", { tool: "env", result }, options).data.result;
  for (const options of [undefined, null, {}, { redact: true }, { redact: null }, { redact: undefined }, { tokenEstimate: 3 }]) {
    assert.ok(!recorded(options).includes(token), `${JSON.stringify(options)} redacts`);
  }
  assert.equal(recorded({ redact: false }), result);
  const kept = session.record("tool_success", { result }, { redact: false, tokenEstimate: 5 });
  assert.deepEqual([kept.data.result, kept.tokenEstimate], [result, 5]);
  assert.deepEqual(session.eventLog.events.at(-1).data, { result }, "recorded as returned");
  // Each getter is read once: nothing is read again across the boundary.
  const reads = { redact: 0, tokenEstimate: 0 };
  const counted = {
    get redact() {
      reads.redact++;
      return false;
    },
    get tokenEstimate() {
      reads.tokenEstimate++;
      return 2;
    },
  };
  assert.equal(recorded(counted), result);
  assert.deepEqual(reads, { redact: 1, tokenEstimate: 1 });
  // What JavaScript does not read as a boolean, Rust rejects with its message.
  for (const redact of ["no", 0, 1, {}]) {
    assert.throws(() => recorded({ redact }), { code: "INVALID_ARGUMENT", message: /options\.redact must be a boolean/ });
  }
  assert.throws(() => recorded({ redact: false, tokenEstimate: -1 }), { code: "INVALID_TOKEN_COUNT" });
  assert.throws(
    () => recorded({ get redact() { throw new Error("no"); } }),
    { code: "INVALID_ARGUMENT", message: /options\.redact could not be read/ },
  );
  session.free();
});
