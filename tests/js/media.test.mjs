// Images and files (issue 36, item 5) through the npm package: attachMedia
// stores the bytes and returns the part an event names (never the bytes);
// a compile with a mediaStore reads them back, counts them by the model's
// rule and every format sends them as it takes them (checkRequest passes;
// the AI SDK form goes through the `ai` package's own prompt validation); a
// tool's screenshot in runCompiled reaches the model as an image, in Chat
// Completions in the user message after the tool results.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { generateText } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import {
  ContextCompiler, HistorySelector, MemoryArtifactStore, Session, attachMedia, checkRequest, runCompiled,
} from "agent-context-compiler";
import { rejectsWithCode } from "./helpers.mjs";

const fixture = (name) => new Uint8Array(readFileSync(new URL(`../fixtures/media/${name}`, import.meta.url)));
const CHART = fixture("chart.png");
const REPORT = fixture("report.pdf");
const b64 = (bytes) => Buffer.from(bytes).toString("base64");

async function asked() {
  const store = new MemoryArtifactStore();
  const chart = await attachMedia(store, CHART);
  const report = await attachMedia(store, REPORT, { filename: "report.pdf" });
  const session = new Session();
  session.record("user_input", { text: "What do these show?", media: [chart, report] });
  const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector()], mediaStore: store });
  return { store, chart, report, session, compiler };
}

test("attachMedia stores the bytes and returns what the cost depends on", async () => {
  const { store, chart, report, session } = await asked();
  assert.deepEqual([chart.type, chart.mediaType, chart.width, chart.height], ["image", "image/png", 1024, 768]);
  assert.deepEqual([report.type, report.pages, report.filename], ["file", 2, "report.pdf"]);
  assert.ok(await store.exists(chart.artifact));
  assert.ok(!JSON.stringify(session.eventLog.events).includes(b64(CHART).slice(0, 64)), "events hold no base64");
  await rejectsWithCode(() => attachMedia(store, new TextEncoder().encode("plain words")), "INVALID_ARGUMENT");
  await rejectsWithCode(() => attachMedia(store, CHART, { detail: "ultra" }), "INVALID_ARGUMENT");
  await rejectsWithCode(() => attachMedia({}, CHART), "INVALID_ARGUMENT");
  await rejectsWithCode(
    () => session.record("user_input", { text: "x", media: [{ type: "image", mediaType: "image/png", data: b64(CHART) }] }),
    "INVALID_ARGUMENT", "attachMedia",
  );
});

test("every format sends the image and the PDF as it takes them, and checkRequest accepts it", async () => {
  const { session, compiler } = await asked();
  const ctx = await compiler.compile(session, 60_000, { systemPrompt: "You are an SRE.", model: "gpt-4.1" });
  assert.deepEqual(ctx.history.at(-1).media.map((p) => p.tokens), [765, 2 * (3000 + 765)]);
  const chart = b64(CHART);
  const report = b64(REPORT);
  const sent = {
    openai: (r) => r.at(-1).content.some((p) => p.image_url?.url === `data:image/png;base64,${chart}`) &&
      r.at(-1).content.some((p) => p.file?.file_data === `data:application/pdf;base64,${report}`),
    "openai-responses": (r) => r.input.at(-1).content.some((p) => p.type === "input_image" && p.image_url.endsWith(chart)),
    anthropic: (r) => r.messages.at(-1).content.some((b) => b.type === "document" && b.source.data === report),
    gemini: (r) => r.contents.at(-1).parts.some((p) => p.inlineData?.data === chart),
    "ai-sdk": (r) => r.messages.at(-1).content.some((p) => p.type === "image" && p.image === chart),
  };
  for (const [format, check] of Object.entries(sent)) {
    const request = ctx.toMessages({ format });
    assert.ok(check(request), `${format}: ${JSON.stringify(request).slice(0, 400)}`);
    assert.deepEqual(checkRequest(request, { format }), [], format);
  }
  assert.match(ctx.toMessages().at(-1).content, /\[image image\/png, 1024x768: artifact [0-9a-f]{64}\]/);
  // The AI SDK's own prompt validation takes it, and hands the model the bytes.
  const model = new MockLanguageModelV4({
    doGenerate: async () => ({ content: [{ type: "text", text: "ok" }], finishReason: { unified: "stop", raw: "stop" }, usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } }, warnings: [] }),
  });
  await generateText({ model, ...ctx.toMessages({ format: "ai-sdk" }) });
  const parts = model.doGenerateCalls[0].prompt.at(-1).content;
  assert.deepEqual(parts.filter((p) => p.type === "file").map((p) => p.mediaType), ["image/png", "application/pdf"]);
});

test("the model's rule decides the count; without a media store a part is named, not sent", async () => {
  const { session, compiler, chart } = await asked();
  const counts = {};
  for (const model of ["gpt-4.1", "claude-sonnet-4-5", "gemini-2.5-pro"]) {
    const ctx = await compiler.compile(session, 60_000, { systemPrompt: "You are an SRE.", model });
    counts[model] = ctx.history.at(-1).media[0].tokens;
    assert.ok(ctx.tokenCount > counts[model]);
  }
  assert.deepEqual(counts, { "gpt-4.1": 765, "claude-sonnet-4-5": 1049, "gemini-2.5-pro": 516 });
  const bare = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector()] });
  const ctx = await bare.compile(session, 60_000, { systemPrompt: "You are an SRE." });
  const request = JSON.stringify(ctx.toMessages({ format: "anthropic" }));
  assert.ok(request.includes(`artifact ${chart.artifact}`) && !request.includes('"base64"'));
});

test("a tool's screenshot reaches the model as an image in runCompiled", async () => {
  const store = new MemoryArtifactStore();
  for (const format of ["openai", "anthropic", "gemini"]) {
    const requests = [];
    await runCompiled("What does the dashboard show?", {
      budget: 20_000, systemPrompt: "You are an SRE.", format, modelName: "gpt-4.1",
      tools: [{ name: "screenshot", parameters: { type: "object" } }],
      bridge: () => CHART, artifactStore: store,
      model: (request, { step }) => {
        requests.push(request);
        return step === 0 ? { toolCalls: [{ id: "c1", name: "screenshot", arguments: {} }] } : "A blue dashboard.";
      },
    });
    const second = requests[1];
    assert.deepEqual(checkRequest(second, { format }), [], format);
    const text = JSON.stringify(second);
    assert.ok(text.includes(b64(CHART)), `${format}: the screenshot is sent`);
    if (format === "openai") {
      const at = second.findIndex((m) => m.role === "tool");
      assert.match(second[at].content, /in the user message after the tool results/);
      assert.equal(second[at + 1].role, "user");
      assert.equal(second[at + 1].content[1].type, "image_url");
    }
    if (format === "anthropic") {
      const result = second.messages.flatMap((m) => m.content).find((b) => b.type === "tool_result");
      assert.equal(result.content[1].type, "image");
    }
  }
});
