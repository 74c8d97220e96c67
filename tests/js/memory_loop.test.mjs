// The memory loop from JS: memory write operations, the persisted memory in
// every store, the fact extractor and the sleep handler with scripted models,
// and a fact said in session 1 reaching the compiled context of session 2.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ContextCompiler, EpisodeSummarizer, EventBus, FactExtractor, InMemoryBackend, KvArtifactStore,
  MemoryArtifactStore, MemoryPreloader, Session, SessionTimeoutMonitor, SleepHandler,
} from "agent-context-compiler";

const DAY = 24 * 3600 * 1000;

function bus(errors = []) {
  return new EventBus({ handlerTimeoutMs: 300, onError: (e, handler) => errors.push([handler, e.code, e.message]) });
}

async function emitAndDrain(b, type, data, extra = {}) {
  b.start();
  await b.emit({ type, agentId: "nous", sessionId: "s-1", data, ...extra });
  await b.stop();
}

test("InMemoryBackend writes, lists by subject and category, and stamps recalls", async () => {
  const m = new InMemoryBackend();
  const before = Date.now();
  m.put({ key: "tea", content: "The user drinks green tea", category: "preference", subject: "user", confidence: 0.9, source: "test" });
  m.put({ key: "db", content: "The database is Postgres", category: "technical", subject: "infra" });
  assert.deepEqual(m.list({ subject: "user" }).map((e) => e.key), ["tea"]);
  assert.deepEqual(m.list({ category: "technical" }).map((e) => e.key), ["db"]);
  assert.equal(m.list().length, 2);
  const [tea] = m.list({ subject: "user" });
  assert.ok(tea.createdAt >= before && tea.createdAt <= Date.now());
  assert.equal(tea.lastRecalledAt, undefined);
  assert.equal(tea.confidence, 0.9);
  const [hit] = await m.recall("green tea", 1);
  assert.ok(hit.lastRecalledAt >= tea.createdAt);
  assert.equal(m.list({ subject: "user" })[0].lastRecalledAt, hit.lastRecalledAt);
  assert.equal(m.delete("db"), true);
  assert.equal(m.delete("db"), false);
  assert.equal(m.size, 1);
  for (const bad of [null, 5, { content: "no key" }, { key: "", content: "x" }, { key: "k", content: 5 }]) {
    assert.throws(() => m.put(bad), (e) => e.code === "INVALID_ARGUMENT", JSON.stringify(bad));
  }
  assert.throws(() => m.list({ subject: 5 }), (e) => e.code === "INVALID_ARGUMENT");
});

/** A KV over a Map, as a host would inject. */
function mapKv() {
  const map = new Map();
  return {
    map,
    get: async (k) => map.get(k) ?? null,
    put: async (k, v) => void map.set(k, v),
    delete: async (k) => void map.delete(k),
    list: async ({ prefix }) => [...map.keys()].filter((k) => k.startsWith(prefix)),
  };
}

for (const [name, makeStore] of [
  ["MemoryArtifactStore", () => new MemoryArtifactStore()],
  ["KvArtifactStore", () => new KvArtifactStore(mapKv())],
]) {
  test(`PersistentMemory in a ${name}: writes are saved, reopened and recalled`, async () => {
    const store = makeStore();
    const memory = await store.openMemory("agent-memory");
    assert.equal(memory.journalId, "agent-memory");
    assert.equal(memory.size, 0);
    await memory.put({ key: "units", content: "The user wants metric units", category: "preference", subject: "user" });
    await memory.put({ key: "db", content: "The database is Postgres", category: "technical" });
    assert.equal(await memory.delete("db"), true);
    assert.equal(await memory.delete("db"), false);
    const [hit] = await memory.recall("metric units please", 3);
    assert.equal(hit.key, "units");
    await memory.save();
    assert.deepEqual(await store.listSessions(), ["agent-memory"]);
    const again = await store.openMemory("agent-memory");
    assert.deepEqual(again.list(), memory.list());
    assert.equal(again.list()[0].lastRecalledAt, hit.lastRecalledAt);
    // The default name, and bad ones.
    assert.equal((await store.openMemory()).journalId, "memory");
    await assert.rejects(store.openMemory(5), (e) => e.code === "INVALID_ARGUMENT");
    await assert.rejects(store.openMemory(""), (e) => e.code === "INVALID_ARGUMENT");
  });
}

test("a KV that fails a save rejects the write; the next save writes it", async () => {
  const kv = mapKv();
  let failing = false;
  const put = kv.put;
  kv.put = async (k, v) => { if (failing) throw new Error("disk full"); return put(k, v); };
  const store = new KvArtifactStore(kv);
  const memory = await store.openMemory("m");
  await memory.put({ key: "a", content: "first" });
  failing = true;
  await assert.rejects(memory.put({ key: "b", content: "second" }), (e) => e.code === "STORE_FAILED" || e.code === "STORE_UNAVAILABLE");
  assert.equal(memory.size, 2, "kept in memory");
  failing = false;
  await memory.save();
  assert.deepEqual((await store.openMemory("m")).list().map((e) => e.key), ["a", "b"]);
});

const FACTS = JSON.stringify([
  { subject: "user", content: "The user prefers metric units", category: "preference", confidence: 0.9 },
  { subject: "user", content: "The user maybe likes jazz", category: "preference", confidence: 0.4 },
  { subject: "deploy", content: "Deploys happen on Fridays", category: "rule" },
]);
const SUMMARY = { title: "Units", summary: "The user set up the deploy and asked for metric units.", key_points: ["metric units"] };

test("FactExtractor stores confident new facts and reports what it skipped", async () => {
  const memory = new InMemoryBackend();
  memory.put({ key: "old", content: "Deploys happen on Fridays", category: "rule", subject: "deploy" });
  const errors = [];
  const b = bus(errors);
  const prompts = [];
  const extractor = new FactExtractor({ bus: b, memory, llm: async (prompt, { maxTokens, signal }) => {
    prompts.push([prompt, maxTokens, signal instanceof AbortSignal]);
    return "```json\n" + FACTS + "\n```";
  } });
  const reports = [];
  b.on("facts_extracted", (e) => reports.push(e.data));
  await emitAndDrain(b, "episode_summarized", { episode_id: "ep-1", summary: SUMMARY });
  assert.deepEqual(errors, []);
  assert.equal(prompts.length, 1);
  assert.ok(prompts[0][0].includes("Summary: The user set up the deploy and asked for metric units."));
  assert.deepEqual(prompts[0].slice(1), [500, true]);
  const stored = memory.list({ subject: "user" });
  assert.equal(stored.length, 1);
  assert.deepEqual({ ...stored[0], createdAt: 0 }, { key: stored[0].key, content: "The user prefers metric units", category: "preference", subject: "user", confidence: 0.9, source: "fact_extractor", createdAt: 0 });
  assert.equal(reports.length, 1);
  assert.deepEqual({ ...reports[0], facts: reports[0].facts.length }, { episode_id: "ep-1", facts: 1, skipped_duplicates: 1, skipped_low_confidence: 1, skipped_invalid: 0 });
  assert.equal(extractor.detach(), true);
  assert.equal(extractor.detach(), false);
});

test("FactExtractor with an injected embedder, and its bad options", async () => {
  const memory = new InMemoryBackend();
  memory.put({ key: "old", content: "The user prefers metric units", subject: "user" });
  const b = bus();
  const seen = [];
  new FactExtractor({
    bus: b, memory,
    llm: async () => JSON.stringify([{ subject: "user", content: "Measure everything in the units the user likes: metric", confidence: 0.9 }]),
    embed: async (text) => (seen.push(text), /units|measure/i.test(text) ? new Float32Array([1, 0]) : [0, 1]),
  });
  await emitAndDrain(b, "episode_summarized", { episode_id: "ep-2", summary: SUMMARY });
  assert.equal(memory.size, 1, "the embedder called it a duplicate");
  assert.ok(seen.length >= 2);
  const llm = async () => "[]";
  for (const [options, code] of [
    [{ bus: b, llm }, "INVALID_ARGUMENT"],
    [{ bus: b, llm, memory: { recall: () => [] } }, "INVALID_ARGUMENT"],
    [{ bus: b, memory }, "INVALID_ARGUMENT"],
    [{ llm, memory }, "INVALID_ARGUMENT"],
    [{ bus: b, llm, memory, minConfidence: 2 }, "INVALID_ARGUMENT"],
    [{ bus: b, llm, memory, maxFacts: -1 }, "INVALID_ARGUMENT"],
    [{ bus: b, llm, memory, embed: 5 }, "INVALID_ARGUMENT"],
  ]) {
    assert.throws(() => new FactExtractor(options), (e) => e.code === code, JSON.stringify(Object.keys(options)));
  }
});

test("a model that never answers is timed out and its signal aborted", async () => {
  const errors = [];
  const b = bus(errors);
  let signal;
  new FactExtractor({ bus: b, memory: new InMemoryBackend(), llm: (_p, o) => ((signal = o.signal), new Promise(() => {})) });
  await emitAndDrain(b, "episode_summarized", { episode_id: "ep-1", summary: SUMMARY });
  assert.equal(errors[0][1], "HANDLER_TIMEOUT");
  assert.equal(signal.aborted, true);
});

test("a JS memory store with put/delete/list works with the handlers, and its failures are reported", async () => {
  const entries = new Map();
  const store = {
    recall: async () => [],
    put: async (e) => void entries.set(e.key, e),
    delete: async (k) => entries.delete(k),
    list: async () => [...entries.values()],
  };
  const errors = [];
  const b = bus(errors);
  new FactExtractor({ bus: b, memory: store, llm: async () => FACTS });
  await emitAndDrain(b, "episode_summarized", { episode_id: "ep-1", summary: SUMMARY });
  assert.deepEqual(errors, []);
  assert.equal(entries.size, 2);
  store.put = async () => { throw new Error("quota"); };
  const b2 = bus(errors);
  new FactExtractor({ bus: b2, memory: store, llm: async () => FACTS });
  await emitAndDrain(b2, "episode_summarized", { episode_id: "ep-1", summary: SUMMARY });
  assert.equal(errors.length, 1);
  assert.equal(errors[0][1], "HANDLER_FAILED");
  assert.match(errors[0][2], /quota/);
});

const DIGEST = JSON.stringify({ summary: "Early work set up the pipeline.", key_points: ["pipeline"] });
const REFLECTION = JSON.stringify({ lessons: ["Check staging first"], summary: "A day of deploy work." });
const GENERAL = JSON.stringify({ subject: "deploy", content: "Deploys run on Fridays via staging", confidence: 0.9 });

function seeded() {
  const memory = new InMemoryBackend();
  const now = Date.now();
  memory.put({ key: "doubt", content: "The user might like jazz", category: "preference", subject: "user", confidence: 0.3 });
  memory.put({ key: "stale", content: "An old port was 8080", category: "technical", createdAt: now - 40 * DAY });
  memory.put({ key: "core", content: "The agent is called Nous", category: "core", createdAt: now - 40 * DAY });
  memory.put({ key: "episode:old", content: "Pipeline: built the pipeline", category: "episode", createdAt: now - 10 * DAY });
  memory.put({ key: "episode:a", content: "Deploy: a failed deploy", category: "episode" });
  memory.put({ key: "episode:b", content: "Units: metric units", category: "episode" });
  for (let i = 0; i < 6; i++) memory.put({ key: `d${i}`, content: `Deploy detail ${i}: step${i} on Fridays`, category: "rule", subject: "deploy", confidence: 0.8 });
  return memory;
}

test("SleepHandler runs the five phases over memory and reports them", async () => {
  const memory = seeded();
  const errors = [];
  const b = bus(errors);
  const answers = [DIGEST, REFLECTION, GENERAL];
  const prompts = [];
  new SleepHandler({ bus: b, memory, llm: async (p) => (prompts.push(p), answers.shift()) });
  const done = [];
  b.on("sleep_completed", (e) => done.push(e.data));
  await emitAndDrain(b, "sleep_started", { idle_seconds: 7200 }, { agentId: "system", sessionId: null });
  assert.deepEqual(errors, []);
  assert.deepEqual(done, [{ phases_completed: ["review", "prune", "compress", "reflect", "generalize"], interrupted: false, phases_failed: [], changes: { review: 1, prune: 1, compress: 1, reflect: 2, generalize: 6 } }]);
  assert.equal(prompts.length, 3);
  const keys = memory.list().map((e) => e.key);
  assert.ok(keys.includes("core") && !keys.includes("stale") && !keys.includes("doubt") && !keys.includes("episode:old"));
  assert.equal(memory.list({ subject: "deploy" }).length, 1);
  assert.equal(memory.list({ subject: "lesson_learned" })[0].content, "Check staging first");
});

test("message_received wakes a running sleep after its phase; a hung model is timed out", async () => {
  const memory = seeded();
  const b = bus();
  let calls = 0;
  new SleepHandler({ bus: b, memory, llm: async () => {
    calls++;
    // The user comes back while the first model call runs.
    await b.emit({ type: "message_received", agentId: "nous", sessionId: "s-2", data: { text: "hi" } });
    return DIGEST;
  } });
  const done = [];
  b.on("sleep_completed", (e) => done.push(e.data));
  await emitAndDrain(b, "sleep_started", {});
  assert.equal(calls, 1);
  assert.deepEqual(done[0].phases_completed, ["review", "prune", "compress"]);
  assert.equal(done[0].interrupted, true);

  const errors = [];
  const hung = bus(errors);
  let signal;
  new SleepHandler({ bus: hung, memory: seeded(), llm: (_p, o) => ((signal = o.signal), new Promise(() => {})) });
  await emitAndDrain(hung, "sleep_started", {});
  assert.equal(errors[0][1], "HANDLER_TIMEOUT");
  assert.equal(signal.aborted, true);
  // The next sleep runs (the timed-out one does not count as still asleep).
  const again = [];
  hung.on("sleep_completed", (e) => again.push(e));
  hung.start();
  await hung.emit({ type: "sleep_started", agentId: "system", data: {} });
  await hung.stop();
  assert.equal(errors.length, 2, "the second sleep ran and timed out too");
});

test("SleepHandler options are checked", () => {
  const b = bus();
  const memory = new InMemoryBackend();
  const llm = async () => "{}";
  for (const bad of [{ pruneAfterMs: -1 }, { keepCategories: "core" }, { keepCategories: [1] }, { compressBatch: 1.5 }, { minConfidence: "x" }, { reflectionPrompt: 3 }]) {
    assert.throws(() => new SleepHandler({ bus: b, llm, memory, ...bad }), (e) => e.code === "INVALID_ARGUMENT", JSON.stringify(bad));
  }
  const h = new SleepHandler({ bus: b, llm, memory, keepCategories: ["core", "pinned"], pruneAfterMs: 0 });
  assert.equal(h.detach(), true);
  assert.equal(h.detach(), false);
});

test("the memory loop: a fact said in session 1 reaches the compiled context of session 2", async () => {
  const store = new KvArtifactStore(mapKv());
  const memory = await store.openMemory("memory");
  let now = 1_000_000;
  const clock = { now: () => now };
  const b = bus();
  const monitor = new SessionTimeoutMonitor({ bus: b, sessionIdleTimeoutMs: 60_000, sleepTimeoutMs: 600_000, clock });
  const model = async (prompt) => {
    if (prompt.startsWith("Given the following conversation transcript")) {
      return JSON.stringify({ title: "Deploy target", summary: "The user said production deploys must go to the eu-west-3 region only.", key_points: ["eu-west-3 only"] });
    }
    if (prompt.startsWith("Review the following conversation summary")) {
      return JSON.stringify([{ subject: "deploy", content: "Production deploys must go to eu-west-3 only", category: "rule", confidence: 0.95 }]);
    }
    return "{}";
  };
  new EpisodeSummarizer({ bus: b, llm: model });
  new FactExtractor({ bus: b, llm: model, memory });
  b.start();
  // Session 1: the user states the rule; the session goes idle and ends.
  await b.emit({ type: "message_received", agentId: "nous", sessionId: "s-1", data: { text: "Remember: production deploys go to eu-west-3 only, never anywhere else.", episode_id: "ep-1", user_id: "u-1" } });
  await b.emit({ type: "turn_completed", agentId: "nous", sessionId: "s-1", data: { response: "Understood, eu-west-3 only for production." } });
  now += 61_000;
  monitor.checkTimeouts();
  await b.stop();
  assert.equal(memory.size, 1);

  // A new process: the memory reopened from the same store.
  const reopened = await store.openMemory("memory");
  const session = new Session({ sessionId: "s-2" });
  session.record("user_input", "Where should I deploy the production build?");
  const compiler = new ContextCompiler({ processors: [new MemoryPreloader(reopened, { topK: 3 })], layout: "zoned" });
  const ctx = await compiler.compile(session, 2000, { systemPrompt: "You are a deploy assistant." });
  const text = JSON.stringify(ctx.toMessages());
  assert.match(text, /eu-west-3 only/);
});
