// The episode summariser from JS with a scripted model: the seed's cases
// and a model that throws, rejects, returns garbage or never answers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { EpisodeSummarizer, EventBus } from "agent-context-compiler";

const transcript = "User: how do I rotate the staging keys?\n\nAssistant: run the rotation job.";
const SUMMARY = { title: "Key rotation", summary: "Rotated keys.", key_points: ["job"], outcome: "resolved", topics: ["security"] };

async function run(llm, data, options = {}) {
  const errors = [];
  const bus = new EventBus({ handlerTimeoutMs: 200, onError: (e, handler) => errors.push([handler, e.code, e.message]) });
  const summarizer = new EpisodeSummarizer({ bus, llm, ...options });
  const out = [];
  bus.on("episode_summarized", (e) => out.push(e));
  bus.start();
  await bus.emit({ type: "session_ended", agentId: "nous", sessionId: "s-1", data });
  await bus.stop();
  return { out, errors, summarizer, bus };
}

test("session_ended with a transcript is summarized and episode_summarized emitted", async () => {
  const prompts = [];
  const { out, errors } = await run(async (prompt, { maxTokens }) => {
    prompts.push([prompt, maxTokens]);
    return JSON.stringify(SUMMARY);
  }, { episode_id: "ep-1", transcript, user_id: "u-1" });
  assert.deepEqual(errors, []);
  assert.equal(prompts.length, 1);
  assert.ok(prompts[0][0].includes(transcript));
  assert.equal(prompts[0][1], 500);
  assert.equal(out.length, 1);
  assert.deepEqual({ ...out[0], timestamp: 0 }, { type: "episode_summarized", agentId: "nous", sessionId: "s-1", data: { episode_id: "ep-1", summary: SUMMARY, user_id: "u-1" }, timestamp: 0 });
});

test("short transcripts and events without episode_id are skipped; limits and prompt are options", async () => {
  let calls = 0;
  const llm = { complete: () => (calls++, JSON.stringify(SUMMARY)) };
  assert.equal((await run(llm, { episode_id: "ep-1", transcript: "too short" })).out.length, 0);
  assert.equal((await run(llm, { transcript })).out.length, 0);
  assert.equal(calls, 0);
  const prompts = [];
  const { out } = await run((p) => (prompts.push(p), "{}"), { episode_id: "e", transcript: "x".repeat(30) }, { minTranscriptChars: 10, maxTranscriptChars: 20, headTailChars: 5, prompt: "T:{transcript}" });
  assert.equal(out.length, 1);
  assert.equal(prompts[0], "T:xxxxx\n\n[... middle truncated ...]\n\nxxxxx");
});

test("a model that throws, rejects, returns garbage or never answers is isolated and counted", async () => {
  for (const [name, llm] of [
    ["throws", () => { throw new Error("quota"); }],
    ["rejects", async () => { throw new Error("network"); }],
    ["garbage", async () => "I'd be happy to help!"],
    ["not a string", async () => 42],
    ["never", () => new Promise(() => {})],
  ]) {
    const { out, errors, bus } = await run(llm, { episode_id: "ep-1", transcript });
    assert.equal(out.length, 0, name);
    assert.equal(errors.length, 1, name);
    assert.equal(errors[0][0], "episode-summarizer");
    assert.equal(errors[0][1], name === "never" ? "HANDLER_TIMEOUT" : "HANDLER_FAILED", name);
    assert.equal(bus.stats.dispatched, 1, name);
  }
});

test("detach() unregisters; bad options are INVALID_ARGUMENT", async () => {
  let calls = 0;
  const bus = new EventBus();
  const s = new EpisodeSummarizer({ bus, llm: () => (calls++, "{}") });
  assert.equal(s.detach(), true);
  assert.equal(s.detach(), false);
  bus.start();
  await bus.emit({ type: "session_ended", agentId: "a", sessionId: "s", data: { episode_id: "e", transcript } });
  await bus.stop();
  assert.equal(calls, 0);
  for (const options of [{ llm: () => "" }, { bus, llm: 3 }, { bus }, { bus, llm: () => "", maxTokens: -1 }, { bus, llm: () => "", prompt: 5 }]) {
    assert.throws(() => new EpisodeSummarizer(options), (e) => e.code === "INVALID_ARGUMENT", Object.keys(options).join());
  }
});
