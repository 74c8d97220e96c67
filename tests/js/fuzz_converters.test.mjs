// The JS value converters and the parsers through the built wasm module
// (wasm32: a 32-bit usize), fuzzed (issue 62): hostile JS values of every
// type for the arguments and options of the public API, and mutated real
// files (tests/fixtures/media, tests/fixtures/fuzz) for attachMedia, a
// tool's output in runCompiled, Session.importJson, a KV store's records
// and a SQL connection's rows. Each call returns, or throws a ContextCompilerError with a code
// its target documents (a hostile getter's own error passes through);
// never INTERNAL_PANIC or MODULE_POISONED, and the module still works
// after the loop. `FUZZ_CASES` sets the inputs per target (default 150, the
// short run in `npm test`; `npm run fuzz` runs 5,000), `FUZZ_SEED` the
// random seed (printed).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ContextCompiler, FsArtifactStore, HistoryRecall, HistorySelector, KvArtifactStore, MemoryArtifactStore, PostgresArtifactStore, Session,
  SqliteArtifactStore, attachMedia, checkRequest, countTokens, estimateTokens, redact, runCompiled,
} from "agent-context-compiler";
import { mapKv } from "../conformance/kv_adapters.mjs";
import { rejectsWithCode } from "./helpers.mjs";
import { HostError, fixture, hostile, mutate, random, spoil } from "./fuzz/hostile.mjs";

const CASES = Number(process.env.FUZZ_CASES ?? 150);
const SEED = Number(process.env.FUZZ_SEED ?? 62);
const PDFS = ["media/report.pdf", "media/deck-objstm.pdf", "media/deck-linearized.pdf", "fuzz/length-overflow.pdf", "fuzz/two-streams.pdf"].map(fixture);
const IMAGES = ["media/icon.png", "media/chart.png", "fuzz/tiny.gif", "fuzz/tiny.jpg", "fuzz/tiny.webp", "fuzz/lossless.webp"].map(fixture);
const SESSION = fixture("fuzz/session.json");
const FORMATS = ["openai", "openai-responses", "anthropic", "gemini", "ai-sdk", "plain"];

/** What went wrong in a target, beyond its documented codes. */
const findings = [];
const counts = {};
/** How each target's inputs ended: `ok` or the error code. */
const outcomes = {};
const tally = (target, how) => {
  outcomes[target] ??= {};
  outcomes[target][how] = (outcomes[target][how] ?? 0) + 1;
};

/** Runs `fn` and checks how it ended: a value, or one of `codes`. */
async function expectCoded(target, codes, fn) {
  counts[target] = (counts[target] ?? 0) + 1;
  try {
    await fn();
    tally(target, "ok");
  } catch (e) {
    if (e instanceof HostError) return tally(target, "host error");
    const code = e?.code;
    tally(target, code ?? e?.name);
    if (e?.name !== "ContextCompilerError" || !codes.includes(code)) {
      findings.push(`${target}: ${e?.name} ${code ?? ""} ${String(e?.message).slice(0, 300)}`);
    }
    if (code === "MODULE_POISONED" || code === "INTERNAL_PANIC") throw e;
  }
}

const ARGUMENT = ["INVALID_ARGUMENT", "NOT_SERIALIZABLE"];

test("the converters and parsers through the wasm module: a value or a documented code", async (t) => {
  const rng = random(SEED);
  t.diagnostic(`FUZZ_SEED=${SEED} FUZZ_CASES=${CASES}`);
  const seeded = new Session({ sessionId: "seeded" });
  seeded.record("user_input", "Why is checkout slow?");
  const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector()] });
  const requests = {};
  for (const format of FORMATS) {
    const ctx = await compiler.compile(seeded, 8_000, { systemPrompt: "sys", model: "gpt-4.1" });
    requests[format] = new TextEncoder().encode(JSON.stringify(ctx.toMessages({ format })));
  }
  const media = new MemoryArtifactStore();

  for (let i = 0; i < CASES; i++) {
    const s = new Session();
    await expectCoded("record", ARGUMENT, () =>
      s.record(rng.next() < 0.7 ? rng.pick(["user_input", "tool_success", "custom"]) : hostile(rng, 1),
        hostile(rng, 4), rng.next() < 0.3 ? hostile(rng, 2) : undefined));
    // The record wire format as the module reads it: the buffers a valid
    // record left, read with other lengths (an internal entry, checked all
    // the same).
    await expectCoded("recordTape", ["INVALID_ARGUMENT", "NOT_SERIALIZABLE"], () => {
      s.record("user_input", { text: "é😀", n: [1, 2.5, null], deep: { a: true } });
      const near = (n) => rng.pick([n, n - 1, n + 1, 0, -1, 2 ** 32 - 6, NaN, 0.5, n * 2]);
      if (rng.next() < 0.5) s.__recordBuffered(undefined, near(10), near(13), near(16), rng.pick([-1, 0, 2 ** 53]), rng.next() < 0.5, undefined);
      else s.__recordRead(near(10), near(13), near(16), rng.pick([-1, 0, 2 ** 53]), rng.next() < 0.5, rng.pick([Date.now(), NaN, -1, 1e300]));
    });
    await expectCoded("importJson", ["INVALID_SESSION_IMPORT", ...ARGUMENT], () => {
      const text = new TextDecoder().decode(mutate(rng, SESSION, "json", 6));
      const imported = Session.importJson(rng.next() < 0.9 ? text : hostile(rng, 1));
      assert.equal(Session.importJson(imported.exportJson()).exportJson(), imported.exportJson());
    });
    await expectCoded("compile", ["INVALID_ARGUMENT", "INVALID_BUDGET", "BUDGET_TOO_SMALL", "NOT_SERIALIZABLE"], async () => {
      // One stage of three spoilt: the constructor, the compile or the render.
      const stage = rng.int(3);
      const maybe = (i, object) => (stage === i ? spoil(rng, object) : object);
      const c = stage === 0
        ? new ContextCompiler(maybe(0, { layout: "zoned", processors: [new HistorySelector()] }))
        : compiler;
      const budget = stage === 1 && rng.next() < 0.3 ? hostile(rng, 1) : 8_000;
      const ctx = await c.compile(seeded, budget, maybe(1, { systemPrompt: "sys", model: "gpt-4.1" }));
      ctx.toMessages(maybe(2, { format: rng.pick(FORMATS) }));
    });
    await expectCoded("checkRequest", ARGUMENT, () => {
      const format = rng.pick(FORMATS);
      let request;
      try {
        request = JSON.parse(new TextDecoder().decode(mutate(rng, requests[format], "json", 4)));
      } catch {
        request = hostile(rng, 4);
      }
      checkRequest(request, rng.next() < 0.9 ? { format } : hostile(rng, 2));
    });
    await expectCoded("checkRequestMedia", [], () => {
      const b64 = (bytes) => Buffer.from(bytes).toString("base64");
      const doc = b64(mutate(rng, rng.pick(PDFS), "pdf"));
      const img = b64(mutate(rng, rng.pick(IMAGES), "image"));
      const format = rng.pick(["openai", "anthropic", "gemini"]);
      const request = {
        openai: [{ role: "user", content: [{ type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${img}` } },
          { type: "file", file: { filename: "f.pdf", file_data: `data:application/pdf;base64,${doc}` } }] }],
        anthropic: { messages: [{ role: "user", content: [
          { type: "image", source: { type: "base64", media_type: "image/png", data: img } },
          { type: "document", source: { type: "base64", media_type: "application/pdf", data: doc } },
          { type: "text", text: "What is this?" }] }] },
        gemini: { contents: [{ role: "user", parts: [{ inlineData: { mimeType: "image/png", data: img } },
          { inlineData: { mimeType: "application/pdf", data: doc } }, { text: "What is this?" }] }] },
      }[format];
      assert.ok(Array.isArray(checkRequest(request, { format, model: "gpt-4.1" })));
    });
    await expectCoded("attachMedia", ARGUMENT, async () => {
      const pdf = rng.next() < 0.5;
      const bytes = mutate(rng, rng.pick(pdf ? PDFS : IMAGES), pdf ? "pdf" : "image");
      const part = await attachMedia(media, bytes, rng.next() < 0.7 ? { filename: "f" } : spoil(rng, { mediaType: pdf ? "application/pdf" : "image/png", detail: "low", filename: "f" }));
      assert.ok(part.type === "file" ? part.pages >= 1 : part.width >= 0, JSON.stringify(part));
    });
    // A part as an event holds it (sizes and pages at the limits of 32
    // bits, or hostile), compiled with its bytes for a provider.
    await expectCoded("compileMedia", ["INVALID_ARGUMENT", "NOT_SERIALIZABLE", "BUDGET_TOO_SMALL"], async () => {
      const pdf = rng.next() < 0.5;
      let part;
      try {
        part = await attachMedia(media, mutate(rng, rng.pick(pdf ? PDFS : IMAGES), pdf ? "pdf" : "image", 2));
      } catch {
        part = await attachMedia(media, rng.pick(pdf ? PDFS : IMAGES));
      }
      const limit = () => rng.pick([0, 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 53, -1, 0.5, hostile(rng, 0)]);
      const edited = rng.next() < 0.5 ? part : { ...part, width: limit(), height: limit(), pages: limit() };
      const s = new Session();
      s.record("user_input", { text: "What is this?", media: [edited] });
      const c = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector()], mediaStore: media });
      const format = rng.pick(["openai", "anthropic", "gemini", "openai-responses", "ai-sdk"]);
      const ctx = await c.compile(s, rng.pick([2_000, 60_000, 1_000_000]), { model: rng.pick(["gpt-4.1", "claude-sonnet-4", "gemini-2.0-flash", undefined]) });
      checkRequest(ctx.toMessages({ format }), { format });
    });
    await expectCoded("text", ["INVALID_ARGUMENT"], () => {
      const text = hostile(rng, 1);
      redact(text);
      countTokens(text);
      estimateTokens(text);
    });
  }

  // A KV store's records damaged: each read is a value or a store error.
  for (let i = 0; i < CASES; i++) {
    const kv = mapKv();
    const store = new KvArtifactStore(kv, { chunkBytes: 4096 });
    const s = new Session({ sessionId: "kv" });
    for (let j = 0; j < 4; j++) s.record("user_input", `turn ${j}`);
    await store.saveSession(s);
    const handle = await store.store(new Uint8Array(9000).fill(7), "src");
    const keys = [...kv.map.keys()];
    for (let n = 1 + rng.int(3); n > 0; n--) {
      const key = rng.pick(keys);
      kv.map.set(key, mutate(rng, kv.map.get(key), "json", 4));
    }
    const codes = ["STORE_CORRUPT", "ARTIFACT_INTEGRITY", "ARTIFACT_INCOMPLETE", "INVALID_SESSION_IMPORT"];
    await expectCoded("kvRecords", codes, () => store.loadSession("kv"));
    await expectCoded("kvRecords", codes, () => store.retrieve(handle.artifactId));
    await expectCoded("kvRecords", codes, () => store.listHandles());
  }

  // A SQL connection answering every read with hostile rows: the row
  // converter and the store's reads are a value or a store error.
  const events = JSON.parse(new TextDecoder().decode(SESSION)).events.map((e) => new TextEncoder().encode(JSON.stringify(e)));
  const cell = () => rng.pick([
    () => hostile(rng, 1),
    () => new TextDecoder().decode(mutate(rng, rng.pick(events), "json", 3)),
    () => rng.pick([0, 1, 4, -1, 2 ** 53, 0.5, 2n ** 70n, -(2n ** 63n), 3n]),
    () => new Uint8Array(rng.int(40)),
    () => null,
  ])();
  const rows = () => rng.next() < 0.1 ? hostile(rng, 2)
    : Array.from({ length: rng.int(4) }, () => (rng.next() < 0.8
      ? Array.from({ length: rng.int(9) }, cell)
      : Object.fromEntries(Array.from({ length: rng.int(9) }, (_, i) => [`c${i}`, cell()]))));
  for (let i = 0; i < CASES; i++) {
    let version = null;
    const connection = {
      async query(sql) {
        return sql.includes("acc_meta") ? [[version]] : rows();
      },
      async batch(statements) {
        const meta = statements.find((st) => st.sql.includes("INSERT INTO acc_meta"));
        if (meta) version = meta.params[0];
      },
    };
    const Store = rng.next() < 0.5 ? SqliteArtifactStore : PostgresArtifactStore;
    const store = new Store(connection);
    // (STORE_FAILED: a query promise rejected, resolving to a revoked Proxy.)
    const codes = ["STORE_CORRUPT", "STORE_INVALID_VALUE", "INVALID_SESSION_IMPORT", "ARTIFACT_INTEGRITY", "STORE_FAILED"];
    await expectCoded("sqlRows", codes, () => store.loadSession("s"));
    await expectCoded("sqlRows", codes, () => store.listSessions());
    await expectCoded("sqlRows", codes, () => store.listHandles());
    await expectCoded("sqlRows", codes, () => store.retrieve("ab".repeat(32)));
    await expectCoded("sqlRows", codes, () => store.exists("ab".repeat(32)));
  }

  // A tool returning a mutated PDF or image in runCompiled.
  const runs = Math.max(10, Math.floor(CASES / 10));
  for (let i = 0; i < runs; i++) {
    const pdf = rng.next() < 0.5;
    const bytes = mutate(rng, rng.pick(pdf ? PDFS : IMAGES), pdf ? "pdf" : "image");
    await expectCoded("runCompiledTool", [], () => runCompiled("Read it.", {
      budget: 20_000, systemPrompt: "sys", format: rng.pick(["openai", "anthropic", "gemini"]), modelName: "gpt-4.1",
      tools: [{ name: "fetch", parameters: { type: "object" } }],
      bridge: () => bytes, artifactStore: new MemoryArtifactStore(),
      model: (_request, { step }) => (step === 0 ? { toolCalls: [{ id: "c1", name: "fetch", arguments: {} }] } : "Done."),
    }));
  }

  t.diagnostic(`inputs per target: ${JSON.stringify(counts)}`);
  t.diagnostic(`outcomes: ${JSON.stringify(outcomes)}`);
  t.diagnostic(`findings: ${findings.length}`);
  assert.deepEqual(findings.slice(0, 20), [], `${findings.length} findings`);
  assert.ok(countTokens("the module still works") > 0);
  new Session().record("user_input", "still works");
});

// Found by the loop above (each test below failed before its fix): a host's rows (a SQL connection's `query`) or
// lists (a KV's `list`, a files object's `list`) given as a Proxy whose
// traps throw, or a revoked one, trapped the stores module (INTERNAL_PANIC,
// then MODULE_POISONED for every store). Each is STORE_INVALID_VALUE, and
// the stores module stays usable.
test("a host's rows or lists whose Proxy traps throw are STORE_INVALID_VALUE, and the stores go on", async () => {
  // (`then` answers: a promise resolving to the value reads it first.)
  const get = (_, key) => { if (key === "then") return undefined; throw new Error("get trap"); };
  const revoked = () => { const r = Proxy.revocable([], {}); r.revoke(); return r.proxy; };
  const trapping = () => [
    [new Proxy([], { get })],
    [new Proxy({}, { get, ownKeys() { throw new Error("ownKeys trap"); } })],
    [revoked()],
    new Proxy([], { get }),
  ];
  const sql = (answer) => {
    let version = null;
    return {
      async query(sql) { return sql.includes("acc_meta") ? [[version]] : answer; },
      async batch(statements) {
        const meta = statements.find((s) => s.sql.includes("INSERT INTO acc_meta"));
        if (meta) version = meta.params[0];
      },
    };
  };
  for (const bad of trapping()) {
    await rejectsWithCode(() => new SqliteArtifactStore(sql(bad)).listSessions(), "STORE_INVALID_VALUE");
    await rejectsWithCode(() => new SqliteArtifactStore(sql([bad])).listSessions(), "STORE_INVALID_VALUE");
    await rejectsWithCode(() => new SqliteArtifactStore(sql([[bad]])).listSessions(), "STORE_INVALID_VALUE");
    const kv = mapKv();
    kv.list = async () => bad;
    await rejectsWithCode(() => new KvArtifactStore(kv).listHandles(), "STORE_INVALID_VALUE");
    const files = { read: async () => null, write: async () => {}, remove: async () => {}, list: async () => bad };
    await rejectsWithCode(() => new FsArtifactStore({ baseDir: "d", files }).listHandles(), "STORE_INVALID_VALUE");
  }
  const store = new KvArtifactStore(mapKv());
  const handle = await store.store(new Uint8Array([1, 2, 3]), "src");
  assert.deepEqual([...await store.retrieve(handle.artifactId)], [1, 2, 3]);
});

// The same in the main module's converters: an argument (a compiler's
// `processors`, `filter`'s kinds, a store's `restore`) or a host's answer (an
// embedder's vectors, an AI SDK result's steps) given as an array Proxy whose
// traps throw trapped the module. Each is its documented error (or, for the
// embedder, recall falls back to words), and the module goes on.
test("arguments and answers whose array Proxy traps throw are coded errors, and the main module goes on", async () => {
  const get = (_, key) => { if (key === "then") return undefined; throw new Error("get trap"); };
  const revoked = () => { const r = Proxy.revocable([], {}); r.revoke(); return r.proxy; };
  for (const bad of [new Proxy([], { get }), revoked()]) {
    assert.throws(() => new ContextCompiler({ processors: bad }), { code: "INVALID_ARGUMENT" });
    const s = new Session();
    s.record("user_input", "Which port does the checkout service use?");
    s.record("assistant_output", "Port 8443.");
    assert.throws(() => s.eventLog.filter(bad), { code: "INVALID_ARGUMENT" });
    assert.throws(() => new MemoryArtifactStore().restore(bad), { code: "INVALID_ARGUMENT" });
    for (const answer of [bad, [bad]]) {
      const compiler = new ContextCompiler({
        layout: "zoned",
        processors: [new HistorySelector({ keepFirst: 0, keepLast: Infinity }), new HistoryRecall({ embedder: async () => answer })],
      });
      const ctx = await compiler.compile(s, 4_000, { systemPrompt: "sys" });
      assert.ok(ctx.tokenCount > 0, "recall falls back to words");
    }
    await rejectsWithCode(() => runCompiled("Hi", {
      budget: 4_000, systemPrompt: "sys",
      model: () => ({ steps: new Proxy([{}], { get }), totalUsage: {} }),
    }), "MODEL_FAILED");
  }
  // Options as a revoked Proxy or one whose traps throw: the options check
  // threw the engine's TypeError (or the trap's error), uncoded.
  const options = [revoked(), new Proxy({}, { getPrototypeOf() { throw new Error("proto trap"); } }),
    new Proxy({}, { ownKeys() { throw new Error("ownKeys trap"); } })];
  for (const bad of options) {
    assert.throws(() => new Session().record("user_input", "x", bad), { code: "INVALID_ARGUMENT" });
    assert.throws(() => new ContextCompiler(bad), { code: "INVALID_ARGUMENT" });
    const s = new Session();
    s.record("user_input", "x");
    await rejectsWithCode(() => new ContextCompiler().compile(s, 1_000, bad), "INVALID_ARGUMENT");
  }
  assert.ok(countTokens("the module still works") > 0);
  new Session().record("user_input", "still works");
});
