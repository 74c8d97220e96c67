// The JS value converters and the parsers through the built wasm module
// (wasm32: a 32-bit usize), fuzzed (issue 62): hostile JS values of every
// type for the arguments and options of the public API, and mutated real
// files (tests/fixtures/media, tests/fixtures/fuzz) for attachMedia, a
// tool's output in runCompiled, Session.importJson and a KV store's
// records. Each call returns, or throws a ContextCompilerError with a code
// its target documents (a hostile getter's own error passes through);
// never INTERNAL_PANIC or MODULE_POISONED, and the module still works
// after the loop. `FUZZ_CASES` sets the inputs per target (default 150, the
// short run in `npm test`; `npm run fuzz` runs 5,000), `FUZZ_SEED` the
// random seed (printed).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ContextCompiler, HistorySelector, KvArtifactStore, MemoryArtifactStore, Session, attachMedia, checkRequest,
  countTokens, estimateTokens, redact, runCompiled,
} from "agent-context-compiler";
import { mapKv } from "../conformance/kv_adapters.mjs";
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
      s.__recordBuffered(undefined, near(10), near(13), near(16), rng.pick([-1, 0, 2 ** 53]), undefined);
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
