// Requests the providers accept, through the npm package: seeded random
// sessions (a greeting first, whitespace-only turns and replies, outcomes
// with the provider's own ids and no call, retries, made-up tool names,
// oversized questions) compiled by every pipeline; the AI SDK form goes
// through the `ai` package's own generateText with its mock model (which
// validates the prompt at run time), as the README spreads it, and through
// runCompiled with format "ai-sdk".
import { test } from "node:test";
import assert from "node:assert/strict";
import { generateText } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import {
  ArtifactAttacher, Compactor, ContextCompiler, HistorySelector, InMemoryBackend, MemoryArtifactStore,
  MemoryPreloader, Session, runCompiled,
} from "agent-context-compiler";

function mockModel() {
  return new MockLanguageModelV4({
    doGenerate: async () => ({
      content: [{ type: "text", text: "ok" }],
      finishReason: { unified: "stop", raw: "stop" },
      usage: {
        inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 1, text: 1, reasoning: 0 },
      },
      warnings: [],
    }),
  });
}

/** A small seeded generator (mulberry32). */
function random(seed) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TEXTS = ["Why did the nightly job fail?", "", "\n\n", "  ", "ok", "2026-11-25 ERROR worker failed job\n".repeat(3000)];
const NAMES = ["read_logs", "multi_tool_use.parallel", "bad name", "x".repeat(70)];
const IDS = ["", "toolu_01.A", "toolu_01_A", "call_1"];

function randomSession(next) {
  const pick = (list) => list[Math.floor(next() * list.length)];
  const s = new Session();
  if (next() < 0.5) s.record("assistant_output", "Hi! How can I help?");
  const n = Math.floor(next() * 12);
  for (let i = 0; i < n; i++) {
    const r = next();
    if (r < 0.3) s.record("user_input", pick(TEXTS));
    else if (r < 0.55) s.record("assistant_output", pick(TEXTS));
    else if (r < 0.8) {
      const name = pick(NAMES);
      const id = s.record("tool_call", { tool_name: name, arguments: { q: i } }).eventId;
      s.record(next() < 0.7 ? "tool_success" : "tool_error", { tool: name, call_id: id, result: pick(TEXTS), error: "failed" });
    } else {
      const id = pick(IDS);
      const name = pick(NAMES);
      s.record("tool_error", { tool: name, call_id: id, error: "timeout" });
      if (next() < 0.5) s.record("tool_success", { tool: name, call_id: id, result: pick(TEXTS) });
    }
  }
  s.record("user_input", pick(TEXTS));
  return s;
}

function pipeline(next) {
  const processors = [];
  if (next() < 0.8) processors.push(new HistorySelector({ keepFirst: Math.floor(next() * 3), keepLast: next() < 0.5 ? Infinity : 4 }));
  if (next() < 0.5) processors.push(new ArtifactAttacher(new MemoryArtifactStore(), { thresholdBytes: 2048 }));
  if (next() < 0.5) processors.push(new Compactor());
  if (next() < 0.3) {
    const memory = new InMemoryBackend();
    memory.store("m", "the nightly job writes to db-primary", "core");
    processors.push(new MemoryPreloader(memory, { topK: 2 }));
  }
  return new ContextCompiler({ layout: "zoned", processors });
}

test("generateText takes the ai-sdk form of 60 random sessions, spread as the README says", async () => {
  const next = random(20261125);
  for (let i = 0; i < 60; i++) {
    const session = randomSession(next);
    const ctx = await pipeline(next).compile(session, 500 + Math.floor(next() * 8000), { systemPrompt: "You are an SRE." });
    const request = ctx.toMessages({ format: "ai-sdk" });
    const model = mockModel();
    const result = await generateText({ model, ...request });
    assert.equal(result.text, "ok", `session ${i}`);
    const sent = model.doGenerateCalls[0].prompt;
    assert.ok(request.instructions.length > 0, `session ${i}: the system prompt survives`);
    assert.equal(sent[0].role, "system", `session ${i}: instructions first`);
    assert.equal(sent.filter((m) => m.role === "system").length, request.instructions.length);
    ctx.free();
    session.free();
  }
});

test("runCompiled with format ai-sdk hands the model { instructions, messages } that generateText takes", async () => {
  const session = new Session();
  session.record("assistant_output", "Hi! How can I help?");
  const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity }), new Compactor()] });
  const model = mockModel();
  const run = await runCompiled("Why did the nightly job fail?", {
    session, compiler, budget: 4000, systemPrompt: "You are an SRE.", format: "ai-sdk",
    model: async (request) => (await generateText({ model, ...request })).text,
  });
  assert.equal(run.result, "ok");
  const prompt = model.doGenerateCalls[0].prompt;
  assert.deepEqual(prompt.map((m) => m.role).slice(-3), ["user", "assistant", "user"], "the placeholder, the greeting, the question");
});

test("runCompiled with format openai-responses and gemini hands the model that shape and the tools in it", async () => {
  const shapes = {
    "openai-responses": {
      tool: (t) => t.type === "function" && t.name === "df" && t.parameters.type === "object",
      answered: (r) => r.input.some((i) => i.type === "function_call" && i.name === "df") && r.input.some((i) => i.type === "function_call_output" && i.output.includes("92%")),
      instructions: (r) => r.instructions.startsWith("You are an SRE."),
    },
    gemini: {
      tool: (t) => t.name === "df" && t.parametersJsonSchema.type === "object",
      answered: (r) =>
        r.contents.some((c) => c.role === "model" && c.parts.some((p) => p.functionCall?.name === "df")) &&
        r.contents.some((c) => c.role === "user" && c.parts.some((p) => p.functionResponse?.response.output.includes("92%"))),
      instructions: (r) => r.systemInstruction.parts[0].text.startsWith("You are an SRE."),
    },
  };
  for (const [format, shape] of Object.entries(shapes)) {
    const requests = [];
    const run = await runCompiled("Is the disk full?", {
      budget: 4000, systemPrompt: "You are an SRE.", format,
      tools: [{ name: "df", description: "disk usage", parameters: { type: "object", properties: {} } }],
      bridge: () => "/data 92% used",
      model: async (request, { tools, step }) => {
        requests.push(request);
        // The host's tool, then the look-back tools, each in the format's shape.
        assert.deepEqual(tools.map((t) => t.name), ["df", "search_history", "read_artifact"]);
        assert.ok(shape.tool(tools[0]), `${format}: ${JSON.stringify(tools)}`);
        assert.ok(tools.every((t) => shape.tool({ ...t, name: "df" })), `${format}: ${JSON.stringify(tools)}`);
        return step === 0 ? { toolCalls: [{ id: "c1", name: "df", arguments: {} }] } : "92% full";
      },
    });
    assert.equal(run.result, "92% full");
    assert.ok(shape.instructions(requests[0]), format);
    assert.ok(shape.answered(requests[1]), `${format}: ${JSON.stringify(requests[1])}`);
    run.session.free();
  }
});
