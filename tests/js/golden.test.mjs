// The golden fixtures the Rust tests run (tests/golden.rs), through the JS
// API: the same inputs must give exactly the same outputs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import {
  ArtifactAttacher, Compactor, ContextCompiler, HistoryRecall, HistorySelector, InMemoryBackend,
  MemoryArtifactStore, MemoryPreloader, Session,
} from "agent-context-compiler";

const dir = new URL("../fixtures/golden/", import.meta.url);
const BASE_MS = 1_700_000_000_000;
const hex12 = (n) => n.toString(16).padStart(12, "0");
const limit = (v) => (v === "Infinity" ? Infinity : v);

function exportDoc(f) {
  return {
    format: "agent-context-compiler/session",
    version: 1,
    sessionId: f.sessionId,
    events: f.events.map((e, i) => ({
      eventId: `${hex12(BASE_MS + i)}-${hex12(i)}`,
      timestamp: BASE_MS + i,
      kind: e.kind,
      data: e.data,
      tokenEstimate: e.tokenEstimate ?? 0,
    })),
  };
}

function processors(f, store) {
  const memory = new InMemoryBackend();
  for (const [key, content, category] of f.memories ?? []) memory.store(key, content, category);
  return f.compile.processors.map((p) => {
    switch (p.type) {
      case "history_selector": return new HistorySelector({ keepFirst: limit(p.keepFirst), keepLast: limit(p.keepLast) });
      case "compactor": return new Compactor(p.target === undefined ? undefined : { target: p.target });
      case "memory_preloader": return new MemoryPreloader(memory, { topK: p.topK, pin: p.pin });
      case "artifact_attacher": return new ArtifactAttacher(store, { thresholdBytes: p.thresholdBytes });
      case "history_recall": return new HistoryRecall();
      default: throw new Error(`unknown processor ${p.type}`);
    }
  });
}

const files = readdirSync(dir).filter((n) => n.endsWith(".json")).sort();

test("there are golden fixtures", () => assert.ok(files.length >= 6));

for (const name of files) {
  test(`golden: ${name}`, async () => {
    const f = JSON.parse(readFileSync(new URL(name, dir), "utf8"));
    const session = Session.importJson(JSON.stringify(exportDoc(f)));
    const before = session.eventLog.length;
    // Searched before the compile (which records events with times of its own).
    const searched = f.search
      ? session.search(f.search.query, { limit: f.search.limit }).map(({ eventId, position, kind }) => ({ eventId, position, kind }))
      : undefined;
    const compiler = new ContextCompiler({ processors: processors(f, new MemoryArtifactStore()), layout: f.compile.layout });
    const ctx = await compiler.compile(session, f.compile.budget, { systemPrompt: f.compile.systemPrompt, ...f.compile.options });
    const actual = {
      messages: ctx.toMessages(),
      tokenCount: ctx.tokenCount,
      artifactRefs: ctx.artifactRefs,
      memoryKeys: ctx.memoryHits.map((m) => m.key),
      dropped: ctx.dropped,
      recordedKinds: session.eventLog.events.slice(before).map((e) => e.kind),
      zoneUsage: ctx.zoneUsage,
      compactionLevel: ctx.compactionLevel,
      summary: ctx.summary ?? null,
      formats: {
        openai: ctx.toMessages({ format: "openai" }),
        anthropic: ctx.toMessages({ format: "anthropic" }),
        "ai-sdk": ctx.toMessages({ format: "ai-sdk" }),
        "openai-responses": ctx.toMessages({ format: "openai-responses" }),
        gemini: ctx.toMessages({ format: "gemini" }),
      },
    };
    if (ctx.recalled.length > 0) actual.recalled = ctx.recalled.map((r) => r.eventId);
    if (searched) actual.search = searched;
    assert.deepEqual(actual, f.expected);
  });
}
