// Hostile input from a caller or a host: wrong argument types, `__proto__`
// keys, out-of-range timestamps, deep data, odd KV values. Each is a coded
// error or kept as data, and the module stays usable.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ContextCompiler, InMemoryBackend, KvArtifactStore, MemoryArtifactStore, Session, TokenBudget,
  countTokens, estimateTokens, redact,
} from "agent-context-compiler";
import { mapKv } from "../conformance/kv_adapters.mjs";
import { rejectsWithCode } from "./helpers.mjs";

const notStrings = [5, null, undefined, {}, ["x"], Symbol("s"), 10n];

test("non-string arguments are INVALID_ARGUMENT, never a trap", async () => {
  for (const bad of notStrings) {
    await rejectsWithCode(() => redact(bad), "INVALID_ARGUMENT", "text");
    await rejectsWithCode(() => countTokens(bad), "INVALID_ARGUMENT", "text");
    await rejectsWithCode(() => estimateTokens(bad), "INVALID_ARGUMENT", "text");
    const memory = new InMemoryBackend();
    await rejectsWithCode(() => memory.store(bad, "content"), "INVALID_ARGUMENT", "key");
    await rejectsWithCode(() => memory.store("k", bad), "INVALID_ARGUMENT", "content");
    await rejectsWithCode(() => memory.forget(bad), "INVALID_ARGUMENT", "key");
    await rejectsWithCode(() => memory.recall(bad), "INVALID_ARGUMENT", "query");
    const store = new MemoryArtifactStore();
    await rejectsWithCode(() => store.retrieve(bad), "INVALID_ARGUMENT", "artifactId");
    await rejectsWithCode(() => store.exists(bad), "INVALID_ARGUMENT", "artifactId");
    await rejectsWithCode(() => store.delete(bad), "INVALID_ARGUMENT", "artifactId");
    await rejectsWithCode(() => store.loadSession(bad), "INVALID_ARGUMENT", "sessionId");
    await rejectsWithCode(() => store.deleteSession(bad), "INVALID_ARGUMENT", "sessionId");
    if (bad !== null && bad !== undefined) {
      await rejectsWithCode(() => store.listHandles(bad), "INVALID_ARGUMENT", "sessionId");
    }
  }
  assert.equal(redact("ok").text, "ok");
  assert.ok(countTokens("still working") > 0);
  const memory = new InMemoryBackend();
  memory.store("k", "v");
  memory.store("k2", "v2", undefined);
  assert.equal(memory.size, 2);
  assert.deepEqual(await new MemoryArtifactStore().listHandles(), []);
});

test("a __proto__ key in event data stays an own property", async () => {
  const data = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}');
  const s = new Session();
  const evt = s.record("note", data);
  for (const d of [evt.data, s.eventLog.events[0].data]) {
    assert.equal(Object.getPrototypeOf(d), Object.prototype);
    assert.ok(Object.hasOwn(d, "__proto__"));
    assert.deepEqual(d["__proto__"], { polluted: true });
    assert.equal(d.polluted, undefined);
  }
  const back = Session.importJson(s.exportJson());
  assert.equal(back.exportJson(), s.exportJson());
  assert.ok(Object.hasOwn(back.eventLog.events[0].data, "__proto__"));
  assert.equal({}.polluted, undefined);
});

test("imported timestamps beyond a Date's range are refused", async () => {
  const s = new Session();
  s.record("user_input", "hi");
  const doc = JSON.parse(s.exportJson());
  doc.events[0].timestamp = 1e300;
  await rejectsWithCode(() => Session.importJson(JSON.stringify(doc)), "INVALID_SESSION_IMPORT", "timestamp");
});

test("data as deep as record accepts round-trips; deeper is NOT_SERIALIZABLE", async () => {
  const nest = (n) => {
    let v = "leaf";
    for (let i = 0; i < n; i++) v = [v];
    return v;
  };
  const s = new Session();
  s.record("note", nest(100));
  await rejectsWithCode(() => s.record("note", nest(101)), "NOT_SERIALIZABLE", "deeper than 100");
  await rejectsWithCode(() => s.record("note", nest(127)), "NOT_SERIALIZABLE");
  const back = Session.importJson(s.exportJson());
  assert.equal(back.exportJson(), s.exportJson());
  const store = new KvArtifactStore(mapKv());
  await store.saveSession(s);
  const loaded = await store.loadSession(s.sessionId);
  assert.equal(loaded.exportJson(), s.exportJson());
});

test("a DataView from a KV is STORE_INVALID_VALUE", async () => {
  const kv = mapKv();
  kv.get = async () => new DataView(new ArrayBuffer(8));
  const store = new KvArtifactStore(kv);
  await rejectsWithCode(() => store.retrieve("0".repeat(64)), "STORE_INVALID_VALUE");
});

test("a budget past 2^53 says why it is refused", async () => {
  await rejectsWithCode(() => new TokenBudget(2 ** 53), "INVALID_BUDGET", "2^53");
  const s = new Session();
  await rejectsWithCode(() => new ContextCompiler({ processors: [] }).compile(s, 2 ** 53), "INVALID_BUDGET", "2^53");
});

test("long strings cross into wasm whole: multi-byte text, emoji and lone surrogates (as U+FFFD)", () => {
  // Strings of 256 UTF-16 units or more take crates/js/src/text.rs's encodeInto
  // path; their content must arrive exactly as through wasm-bindgen's own.
  const pieces = ["plain ascii ", "é", "日本語", "😀", "\uD800", "x\uDC00y", "\u0000", "end"];
  const cases = [];
  for (let n = 0; n < 40; n++) {
    let s = "";
    let i = n;
    while (s.length < 256 + n * 37) s += pieces[i++ % pieces.length];
    cases.push(s);
  }
  cases.push("a".repeat(255), "a".repeat(256), "é".repeat(300), "😀".repeat(200), "\uD800".repeat(300));
  const session = new Session();
  for (const text of cases) {
    const expected = text.toWellFormed();
    const event = session.record("user_input", { text });
    assert.equal(event.data.text, expected);
    assert.equal(countTokens(text), countTokens(expected));
    assert.equal(redact(text).text, expected);
  }
  const stored = session.eventLog.events.map((e) => e.data.text);
  assert.deepEqual(stored, cases.map((t) => t.toWellFormed()));
});

test("wrong types in ContextWindow, SchemaRegistry and compile are INVALID_ARGUMENT; the module lives (issue 33, item 2)", async () => {
  const { ContextWindow, SchemaRegistry, HistorySelector } = await import("agent-context-compiler");
  const w = new ContextWindow({ maxContextTokens: 1000 });
  for (const bad of [{ files: ["a", "b"] }, 5, null, undefined, ["x"]]) {
    await rejectsWithCode(() => w.appendToolResult("ls", bad), "INVALID_ARGUMENT", "result");
    await rejectsWithCode(() => w.appendToolResult(bad, "ok"), "INVALID_ARGUMENT", "toolName");
    await rejectsWithCode(() => w.appendMessage("user", bad), "INVALID_ARGUMENT", "content");
    await rejectsWithCode(() => w.addRecentMessage(bad, "x"), "INVALID_ARGUMENT", "role");
    for (const m of ["setGoal", "setSystemPrompt", "setTaskState", "writeScratchpad", "compactWorkingMemory", "emergencyCompact"]) {
      await rejectsWithCode(() => w[m](bad), "INVALID_ARGUMENT");
    }
    const registry = new SchemaRegistry();
    for (const m of ["get", "register", "validate", "addResource"]) {
      await rejectsWithCode(() => registry[m](bad, {}), "INVALID_ARGUMENT");
    }
    const compiler = new ContextCompiler({ processors: [new HistorySelector()] });
    await rejectsWithCode(() => compiler.compile(bad, 1000), "INVALID_ARGUMENT", "session");
    await rejectsWithCode(() => new HistorySelector().process(bad, {}, 1000), "INVALID_ARGUMENT", "session");
  }
  const freed = new Session();
  freed.free();
  await rejectsWithCode(() => new ContextCompiler().compile(freed, 1000), "INVALID_ARGUMENT", "session");
  await rejectsWithCode(() => freed.record("user_input", "x"), "INVALID_ARGUMENT", "freed");
  w.appendToolResult("ls", "a\nb");
  assert.equal(w.workingItems.length, 1, "the window still works");
  assert.equal(new Session().record("user_input", "alive").kind, "user_input");
});
