// The seed's test_processors, ported, plus custom processors and memory stores from JS.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ArtifactAttacher, Compactor, ContextCompiler, HistorySelector, InMemoryBackend,
  MemoryArtifactStore, MemoryPreloader, Session,
} from "agent-context-compiler";
import { rejectsWithCode } from "./helpers.mjs";

function sessionWithHistory(n) {
  const s = new Session();
  for (let i = 0; i < n; i++) {
    const role = i % 2 === 0 ? "user" : "assistant";
    s.record(role === "user" ? "user_input" : "phase_result", { role, content: `Message ${i}` }, { tokenEstimate: 20 });
  }
  return s;
}

test("history selector keeps first and last", async () => {
  const s = sessionWithHistory(20);
  const ctx = await new ContextCompiler({ processors: [new HistorySelector({ keepFirst: 2, keepLast: 3 })] })
    .compile(s, 500, { systemPrompt: "test" });
  assert.equal(ctx.history.length, 5);
  assert.equal(ctx.history[0].content, "Message 0");
  assert.equal(ctx.history[1].content, "Message 1");
  assert.equal(ctx.history.at(-1).content, "Message 19");
});

test("history selector options are validated; Infinity keeps all that fit", async () => {
  assert.equal(new HistorySelector({ keepLast: Infinity }).keepLast, Infinity);
  assert.equal(new HistorySelector().keepFirst, 2);
  await rejectsWithCode(() => new HistorySelector({ keepFirst: -1 }), "INVALID_ARGUMENT", "keepFirst");
  await rejectsWithCode(() => new HistorySelector({ keepLast: NaN }), "INVALID_ARGUMENT", "keepLast");
  await rejectsWithCode(() => new HistorySelector(5), "INVALID_ARGUMENT");
});

test("compactor merges consecutive", async () => {
  const s = new Session();
  s.record("user_input", { content: "  Hello  " });
  s.record("user_input", { content: "  World  " });
  s.record("assistant_output", { content: "Hi there" });
  const ctx = await new ContextCompiler({ processors: [new HistorySelector(), new Compactor()] }).compile(s, 500);
  assert.equal(ctx.history.length, 2);
  assert.equal(ctx.history[0].role, "user");
  assert.equal(ctx.history[0].content, "Hello\nWorld");
});

test("memory preloader", async () => {
  const mem = new InMemoryBackend();
  mem.store("fact1", "Python is a programming language", "core");
  mem.store("fact2", "Rust is systems programming", "core");
  const s = new Session();
  s.record("user_input", { text: "Tell me about Python" }, { tokenEstimate: 10 });
  const ctx = await new ContextCompiler({ processors: [new MemoryPreloader(mem, { topK: 5 })] }).compile(s, 500, { systemPrompt: "test" });
  assert.ok(ctx.memoryHits.length >= 1);
  assert.equal(ctx.memoryHits[0].key, "fact1");
  assert.ok(ctx.toMessages()[0].content.includes("Python is a programming language"));
  assert.equal((await mem.recall("python", 1)).length, 1);
});

test("memory stores can be plain objects or (async) functions; failures are clear", async () => {
  const s = new Session();
  s.record("user_input", "what about cats?");
  const seen = [];
  const asObject = { recall: async (q, limit) => (seen.push([q, limit]), [{ key: "c", content: "cats purr" }]) };
  const asFunction = (q) => [{ key: "f", content: `function saw ${q}` }];
  for (const [memory, key] of [[asObject, "c"], [asFunction, "f"]]) {
    const ctx = await new ContextCompiler({ processors: [new MemoryPreloader(memory, { topK: 3 })] }).compile(s, 500);
    assert.equal(ctx.memoryHits[0].key, key);
  }
  assert.deepEqual(seen, [["what about cats?", 3]]);
  const throwing = new MemoryPreloader({ recall() { throw "not an Error"; } });
  await rejectsWithCode(() => new ContextCompiler({ processors: [throwing] }).compile(s, 500), "MEMORY_FAILED", "not an Error");
  const garbage = new MemoryPreloader(async () => [{ nope: 1 }]);
  await rejectsWithCode(() => new ContextCompiler({ processors: [garbage] }).compile(s, 500), "MEMORY_FAILED", "key");
  await rejectsWithCode(() => new MemoryPreloader(42), "INVALID_ARGUMENT");
});

test("artifact attacher externalizes large", async () => {
  const store = new MemoryArtifactStore();
  const s = new Session();
  s.record("tool_success", { tool: "big_tool", result: "x".repeat(5000) });
  const compiler = new ContextCompiler({
    processors: [new HistorySelector(), new ArtifactAttacher(store, { thresholdBytes: 1024 })],
  });
  const ctx = await compiler.compile(s, 500, { systemPrompt: "test" });
  assert.equal(ctx.artifactRefs.length, 1);
  assert.ok(ctx.artifactRefs[0].handle);
  assert.ok(ctx.artifactRefs[0].sizeBytes >= 5000);
  assert.equal(ctx.toolResults.length, 0);
  assert.ok(ctx.tokenCount < 5000);
  assert.equal(s.eventLog.filter(["artifact_stored"]).length, 1);
  await rejectsWithCode(() => new ArtifactAttacher({}, {}), "INVALID_ARGUMENT", "artifact store");
});

test("custom processors: objects, functions, async; they get a plain context and the session", async () => {
  const s = new Session({ sessionId: "custom" });
  s.record("user_input", "shout this");
  const upper = {
    name: "upper",
    process(session, ctx, budget) {
      assert.equal(session.sessionId, "custom");
      assert.equal(budget, 300);
      return { ...ctx, history: ctx.history.map((h) => ({ ...h, content: h.content.toUpperCase() })), tokenCount: 0 };
    },
  };
  async function addNote(session, ctx) {
    await new Promise((r) => setTimeout(r, 1));
    return { ...ctx, memoryHits: [...ctx.memoryHits, { key: "note", content: `${session.eventLog.length} events` }] };
  }
  const compiler = new ContextCompiler({ processors: [new HistorySelector(), upper] });
  compiler.addProcessor(addNote);
  assert.deepEqual(compiler.processorNames, ["history_selector", "upper", "addNote"]);
  // 351 less the default counter's content margin (351 / 1.17) is 300.
  const ctx = await compiler.compile(s, 351);
  assert.equal(ctx.budgetPlan.target, 300);
  assert.equal(ctx.history[0].content, "SHOUT THIS");
  assert.equal(ctx.memoryHits[0].content, "1 events");
  assert.ok(ctx.tokenCount > 0, "the compiler recounts; a processor cannot lie");
});

test("failing or misbehaving custom processors reject with PROCESSOR_FAILED and leave the session unchanged", async () => {
  const s = new Session();
  s.record("tool_success", { tool: "t", result: "z".repeat(5000) });
  const before = s.exportJson();
  const attacher = new ArtifactAttacher(new MemoryArtifactStore(), { thresholdBytes: 1024 });
  const bad = [
    [() => { throw new Error("boom"); }, "boom"],
    [async () => { throw undefined; }, "undefined"],
    [() => undefined, "must return a context"],
    [() => ({ history: "nope" }), "returned context"],
    [() => Promise.reject("a string"), "a string"],
  ];
  for (const [p, message] of bad) {
    const compiler = new ContextCompiler({ processors: [new HistorySelector(), attacher, p] });
    await rejectsWithCode(() => compiler.compile(s, 1000), "PROCESSOR_FAILED", message);
  }
  assert.equal(s.exportJson(), before);
  await rejectsWithCode(() => new ContextCompiler({ processors: [42] }), "INVALID_ARGUMENT", "processors[0]");
  await rejectsWithCode(() => new ContextCompiler({ processors: "nope" }), "INVALID_ARGUMENT");
});
