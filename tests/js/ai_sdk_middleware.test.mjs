// agent-context-compiler/ai-sdk's contextMiddleware: an app written with the
// AI SDK keeps its own messages, tools (with execute) and stopWhen; every
// model call is compiled from the session within the budget, every step is
// recorded (tool results redacted), and a second process continues the
// thread from the store.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateText, isStepCount, streamText, wrapLanguageModel } from "ai";
import { convertToLanguageModelPrompt, standardizePrompt } from "ai/internal";
import { contextMiddleware, toLanguageModelPrompt } from "agent-context-compiler/ai-sdk";
import { Compactor, ContextCompiler, FsArtifactStore, HistoryRecall, HistorySelector, Session } from "agent-context-compiler";
import { scriptedModel, tools } from "./ai_sdk_loop.mjs";
import { childJson } from "./helpers.mjs";

const BUDGET = 3000;
const SECRET = "Zq8vN2mLk4Rt7Wx1Yb3Hc6Jd9Fg0Ps5Ue2Ai7Ko";

/** The recommended compiler, and the token count of each context it compiled. */
function measured() {
  const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity }), new Compactor(), new HistoryRecall()] });
  const counts = [];
  return {
    counts,
    compiler: {
      async compile(session, budget, options) {
        const ctx = await compiler.compile(session, budget, options);
        counts.push(ctx.tokenCount);
        return ctx;
      },
    },
  };
}

/** Every tool call in `prompt` is answered by a result under its id in the next message. */
function paired(prompt) {
  return prompt.every((m, i) =>
    m.role !== "assistant" ||
    m.content.filter((p) => p.type === "tool-call").every((c) => prompt[i + 1]?.role === "tool" && prompt[i + 1].content.some((r) => r.type === "tool-result" && r.toolCallId === c.toolCallId)),
  );
}

async function thirtyTurns(stream) {
  const session = new Session({ sessionId: stream ? "thread-stream" : "thread-generate" });
  const dir = mkdtempSync(join(tmpdir(), "acc-ai-sdk-"));
  const store = new FsArtifactStore({ baseDir: dir });
  const { compiler, counts } = measured();
  const { model, prompts } = scriptedModel();
  const wrapped = wrapLanguageModel({ model, middleware: contextMiddleware({ session, compiler, budget: BUDGET, store, systemPrompt: "You are an SRE." }) });
  const messages = [];
  const compiles = [];
  for (let turn = 1; turn <= 30; turn++) {
    messages.push({ role: "user", content: `Turn ${turn}: what did the nightly job log?` });
    const call = { model: wrapped, tools, stopWhen: isStepCount(5), messages };
    const result = stream ? streamText(call) : await generateText(call);
    assert.equal(await result.text, `Turn ${turn}: the job ran.`);
    messages.push(...(await result.responseMessages));
    for (const step of await result.steps) compiles.push(step.providerMetadata?.agentContextCompiler);
  }
  return { session, dir, store, counts, prompts, messages, compiles };
}

for (const stream of [false, true]) {
  test(`a 30-turn ${stream ? "streamText" : "generateText"} tool loop: within budget, question present, calls paired, every step recorded, secrets kept out`, async () => {
    const { session, dir, counts, prompts, messages, compiles } = await thirtyTurns(stream);
    try {
      assert.equal(prompts.length, 60);
      assert.equal(counts.length, 60);
      for (const c of counts) assert.ok(c <= BUDGET, `${c} tokens`);
      prompts.forEach((prompt, i) => {
        const turn = Math.floor(i / 2) + 1;
        assert.equal(prompt[0].role, "system");
        assert.match(prompt[0].content, /^You are an SRE\./);
        assert.ok(prompt.some((m) => m.role === "user" && m.content.some((p) => p.text === `Turn ${turn}: what did the nightly job log?`)), `turn ${turn}'s question`);
        assert.ok(paired(prompt), `call ${i} paired`);
        assert.ok(!JSON.stringify(prompt).includes(SECRET), "no secret reaches the model");
      });
      assert.ok(messages.length > 60, "the app's own messages grew as usual");
      // Each step's reply carries its compile's ledger and cache report.
      assert.equal(compiles.length, 60);
      compiles.forEach((c, i) => {
        assert.equal(c.ledger.included.reduce((n, p) => n + p.tokens, 0), counts[i], `step ${i}'s ledger adds up`);
        assert.ok(c.cache, `step ${i} has a cache report`);
      });
      assert.equal(compiles[0].cache.miss.cause, "first");
      assert.ok(compiles.slice(1).every((c) => c.cache.prefixTokens > 0), "later steps repeat a prefix");
      const kinds = session.eventLog.events.map((e) => e.kind);
      const count = (k) => kinds.filter((x) => x === k).length;
      assert.deepEqual([count("user_input"), count("tool_call"), count("tool_success"), count("assistant_output"), count("model_usage")], [30, 30, 30, 30, 60]);
      assert.ok(!session.exportJson().includes(SECRET), "the session holds no secret");
      // The store holds every event: a loaded copy has them all.
      const loaded = await new FsArtifactStore({ baseDir: dir }).loadSession(session.sessionId);
      assert.equal(loaded.eventLog.length, session.eventLog.length);
      loaded.free();
    } finally {
      session.free();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test("a second process continues the thread from the store", async () => {
  const { session, dir } = await thirtyTurns(false);
  try {
    const before = session.eventLog.length;
    const out = await childJson("ai_sdk_turn.mjs", dir, session.sessionId, "31");
    assert.equal(out.text, "Turn 31: the job ran.");
    assert.equal(out.events, before + 6, "user_input, model_usage, tool_call, tool_success, model_usage, assistant_output");
    // The thread's earlier turns reach the model in the new process.
    assert.ok(out.prompts[0].some((m) => m.role === "user" && m.content.some((p) => p.text === "Turn 30: what did the nightly job log?")));
    const loaded = await new FsArtifactStore({ baseDir: dir }).loadSession(session.sessionId);
    assert.equal(loaded.eventLog.length, before + 6);
    loaded.free();
  } finally {
    session.free();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("sessions per thread come from providerOptions.agentContextCompiler.sessionId", async () => {
  const sessions = new Map();
  const { compiler } = measured();
  const { model } = scriptedModel();
  const wrapped = wrapLanguageModel({
    model,
    middleware: contextMiddleware({ session: (id) => sessions.get(id) ?? sessions.set(id, new Session({ sessionId: id })).get(id), compiler, budget: BUDGET }),
  });
  for (const id of ["a", "b", "a"]) {
    await generateText({ model: wrapped, tools, stopWhen: isStepCount(5), prompt: `Turn 1: thread ${id}`, providerOptions: { agentContextCompiler: { sessionId: id } } });
  }
  assert.deepEqual([...sessions.keys()], ["a", "b"]);
  assert.equal(sessions.get("a").eventLog.events.filter((e) => e.kind === "user_input").length, 2);
  await assert.rejects(generateText({ model: wrapped, prompt: "Turn 1: no id" }), { code: "INVALID_ARGUMENT" });
  for (const s of sessions.values()) s.free();
});

test("options are checked: a misspelt key names the closest", () => {
  const session = new Session();
  const { compiler } = measured();
  assert.throws(() => contextMiddleware({ session, compiler, budget: 100, systemprompt: "x" }), { code: "INVALID_ARGUMENT", message: /unknown option systemprompt; did you mean systemPrompt\?/ });
  assert.throws(() => contextMiddleware({ session, budget: 100 }), { code: "INVALID_ARGUMENT" });
  assert.throws(() => contextMiddleware({ session, compiler }), { code: "INVALID_ARGUMENT" });
  assert.throws(() => contextMiddleware(null), { code: "INVALID_ARGUMENT" });
  session.free();
});

test("toLanguageModelPrompt gives what the SDK's own conversion gives", async () => {
  const session = new Session();
  session.record("user_input", { text: "How full is /data?" });
  session.record("tool_call", { tool_name: "df", arguments: { path: "/data" }, call_id: "c1" });
  session.record("tool_success", { tool: "df", call_id: "c1", result: "92%" });
  session.record("assistant_output", { text: "92% full." });
  session.record("user_input", { text: "And now?" });
  const ctx = await new ContextCompiler({ layout: "zoned", processors: [new HistorySelector()] }).compile(session, 4000, { systemPrompt: "You are an SRE.", goal: "Keep disks below 90%" });
  const request = ctx.toMessages({ format: "ai-sdk" });
  const theirs = await convertToLanguageModelPrompt({ prompt: await standardizePrompt(request), supportedUrls: {}, download: undefined });
  // Equal but for the keys the SDK sets to undefined.
  assert.deepEqual(toLanguageModelPrompt(request), JSON.parse(JSON.stringify(theirs)));
  ctx.free();
  session.free();
});
