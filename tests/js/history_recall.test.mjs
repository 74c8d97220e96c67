// HistoryRecall from JS: an evicted turn comes back in the RECENT tail,
// within the budget; bad options are INVALID_ARGUMENT.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Compactor, ContextCompiler, HistoryRecall, HistorySelector, Session } from "agent-context-compiler";

// As recommended: the Compactor keeps the window below the budget, and
// recall takes (part of) the room it leaves. The conversation is compiled
// every 10 events, as a live loop does.
const pipeline = (recall) =>
  new ContextCompiler({
    layout: "zoned",
    processors: [new HistorySelector({ keepFirst: 0, keepLast: Infinity }), new Compactor(), ...(recall ? [new HistoryRecall()] : [])],
  });

async function conversation() {
  const s = new Session({ sessionId: "recall" });
  s.record("user_input", { content: "My passport number ends in 4471 and it expires in June 2031." });
  s.record("assistant_output", { content: "Noted, the passport expires in June 2031." });
  const live = pipeline(false);
  for (let i = 0; i < 150; i++) {
    s.record("user_input", { content: `Small talk number ${i} about the weather and the weekend.` });
    s.record("assistant_output", { content: `Reply ${i}: a few ordinary sentences about nothing much, to fill the window.` });
    if (i % 5 === 4) (await live.compile(s, 1500, { systemPrompt: "You are helpful." })).free();
  }
  s.record("user_input", { content: "When does my passport expire?" });
  return s;
}

test("an evicted turn is recalled into the tail, within the budget", async () => {
  const s = await conversation();
  const ctx = await pipeline(true).compile(s, 1500, { systemPrompt: "You are helpful." });
  assert.ok(ctx.tokenCount <= 1500);
  const messages = ctx.toMessages({ format: "openai" });
  const tail = messages.at(-1).content;
  assert.match(tail, /## Recalled from earlier in this conversation/);
  assert.match(tail, /4471/);
  assert.match(tail, /\[\d{4}-\d\d-\d\d \d\d:\d\d UTC\] user:/);
  assert.equal(new HistoryRecall().name, "history_recall");
  ctx.free();
  s.free();
});

test("a message pointing at nothing in particular recalls nothing unless minDistinction is 0", async () => {
  const s = await conversation();
  s.record("user_input", { content: "Some small talk about the weather and the weekend, please." });
  const quiet = await pipeline(true).compile(s, 1500, { systemPrompt: "You are helpful." });
  assert.deepEqual(quiet.recalled, []);
  quiet.free();
  const eager = new ContextCompiler({
    layout: "zoned",
    processors: [new HistorySelector({ keepFirst: 0, keepLast: Infinity }), new Compactor(), new HistoryRecall({ minDistinction: 0 })],
  });
  const ctx = await eager.compile(s, 1500, { systemPrompt: "You are helpful." });
  assert.ok(ctx.recalled.length > 0);
  ctx.free();
  const [hit] = s.search("When does my passport expire?", { limit: 1 });
  assert.ok(hit.distinction >= 4, JSON.stringify(hit));
  s.free();
});

test("HistoryRecall's options are checked", () => {
  for (const options of [{ share: 2 }, { share: -0.1 }, { share: "half" }, { matches: -1 }, { neighbours: 1.5 }, { turnTokens: "x" }, { minDistinction: -1 }, { minDistinction: "high" }, [1], 7]) {
    assert.throws(() => new HistoryRecall(options), { code: "INVALID_ARGUMENT" }, JSON.stringify(options));
  }
  new HistoryRecall({ share: 0.25, matches: 3, neighbours: 0, turnTokens: 100, minDistinction: 0 }).free();
});
