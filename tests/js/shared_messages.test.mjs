// toMessages shares message objects between calls: the messages of a
// compiler's previous rendering of the same session (same format, same
// model) that render the same again are the same frozen objects, the array
// (and a request object around it) is new, and what it returns is what a
// context built by hand from the same fields renders.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  attachMedia,
  ContextCompiler,
  HistorySelector,
  MemoryArtifactStore,
  Session,
  WorkingContext,
} from "agent-context-compiler";

function turn(session, i) {
  session.record("user_input", `question ${i}: how is service ${i} doing?`);
  session.record("assistant_output", `service ${i} is fine`);
}

// A context built by hand from a compiled one's JSON.
const byHand = (ctx) => new WorkingContext(ctx.toJSON());
const fresh = (ctx, options) => byHand(ctx).toMessages(options);

test("a compiler's next rendering shares the unchanged messages, frozen", async () => {
  const s = new Session({ sessionId: "shared" });
  for (let i = 0; i < 6; i++) turn(s, i);
  const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity })] });
  const options = { systemPrompt: "You are terse." };
  const first = (await compiler.compile(s, 8_000, options)).toMessages({ format: "openai" });
  assert.ok(first.every((m) => Object.isFrozen(m)));
  assert.throws(() => {
    "use strict";
    first[1].content = "changed";
  }, TypeError);
  first.push({ role: "user", content: "mine" }); // the array is the caller's
  turn(s, 6);
  const ctx = await compiler.compile(s, 8_000, options);
  const second = ctx.toMessages({ format: "openai" });
  assert.notEqual(second, first);
  assert.deepEqual(second, fresh(ctx, { format: "openai" }));
  const shared = second.filter((m, i) => m === first[i]).length;
  assert.ok(shared >= first.length - 3, `${shared} of ${first.length - 1} shared`);
  assert.notEqual(second.at(-1), first.at(-2), "the restated goal's tail is rendered anew");
  assert.ok(second.every((m) => Object.isFrozen(m)));
  // Another format renders anew.
  const plain = ctx.toMessages({ format: "plain" });
  assert.ok(plain.every((m, i) => m !== second[i]));
  assert.deepEqual(plain, fresh(ctx, { format: "plain" }));
});

test("a request object is new at each call and shares its message list's objects", async () => {
  const s = new Session({ sessionId: "anthropic" });
  for (let i = 0; i < 4; i++) turn(s, i);
  const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity })] });
  const a = (await compiler.compile(s, 8_000, { systemPrompt: "Be brief." })).toMessages({ format: "anthropic" });
  turn(s, 4);
  const ctx = await compiler.compile(s, 8_000, { systemPrompt: "Be brief." });
  const b = ctx.toMessages({ format: "anthropic" });
  assert.notEqual(a, b);
  assert.deepEqual(Object.keys(b), Object.keys(fresh(ctx, { format: "anthropic" })));
  assert.deepEqual(b, fresh(ctx, { format: "anthropic" }));
  assert.ok(b.messages.some((m, i) => m === a.messages[i]), "some messages shared");
  assert.ok(Object.isFrozen(b.messages[0]));
  // Another session of the same compiler shares nothing with this one.
  const other = new Session({ sessionId: "other" });
  for (let i = 0; i < 4; i++) turn(other, i);
  const c = (await compiler.compile(other, 8_000, { systemPrompt: "Be brief." })).toMessages({ format: "anthropic" });
  assert.ok(c.messages.every((m) => !b.messages.includes(m)));
});

test("a context built by hand renders plain, unfrozen objects", async () => {
  const s = new Session({ sessionId: "hand" });
  turn(s, 0);
  const ctx = await new ContextCompiler({ processors: [] }).compile(s, 4_000, { systemPrompt: "x" });
  const messages = byHand(ctx).toMessages({ format: "openai" });
  assert.ok(messages.every((m) => !Object.isFrozen(m)));
});

test("with images in the window, the whole request is compared and still shared", async () => {
  const store = new MemoryArtifactStore();
  const chart = await attachMedia(store, new Uint8Array(readFileSync(new URL("../fixtures/media/chart.png", import.meta.url))));
  const s = new Session({ sessionId: "media" });
  s.record("user_input", { text: "What does this chart show?", media: [chart] });
  s.record("assistant_output", "Latency by hour.");
  const compiler = new ContextCompiler({ layout: "zoned", mediaStore: store, processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity })] });
  const a = (await compiler.compile(s, 8_000, { systemPrompt: "x" })).toMessages({ format: "openai" });
  turn(s, 1);
  const ctx = await compiler.compile(s, 8_000, { systemPrompt: "x" });
  const b = ctx.toMessages({ format: "openai" });
  assert.ok(JSON.stringify(b).includes("data:image/png;base64,"), "the image is inlined from the store");
  assert.equal(b[1], a[1], "the message with the image is shared");
  assert.ok(Object.isFrozen(b[1].content[1]));
  assert.deepEqual(
    b.map((m) => m.role),
    fresh(ctx, { format: "openai" }).map((m) => m.role),
  );
});

test("a context's own JSON builds it again; a misspelt field is still refused", async () => {
  const s = new Session({ sessionId: "json" });
  turn(s, 0);
  const ctx = await new ContextCompiler({ layout: "zoned", processors: [new HistorySelector()] }).compile(s, 4_000, {
    systemPrompt: "x",
    tools: [{ name: "lookup" }],
    reserveOutput: 100,
  });
  const again = new WorkingContext(ctx.toJSON());
  assert.deepEqual(again.toJSON(), ctx.toJSON());
  assert.deepEqual(again.toMessages({ format: "anthropic" }), ctx.toMessages({ format: "anthropic" }));
  assert.throws(() => new WorkingContext({ ...ctx.toJSON(), histroy: [] }), (e) => e.code === "INVALID_ARGUMENT" && /histroy/.test(e.message));
});

test("a window that slides (its oldest turns dropped) still shares the turns it keeps", async () => {
  const s = new Session({ sessionId: "sliding" });
  for (let i = 0; i < 60; i++) turn(s, i);
  const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity })] });
  const options = { systemPrompt: "You are terse." };
  const budget = 900;
  const first = (await compiler.compile(s, budget, options)).toMessages({ format: "openai" });
  for (let i = 60; i < 63; i++) turn(s, i);
  const ctx = await compiler.compile(s, budget, options);
  const second = ctx.toMessages({ format: "openai" });
  assert.deepEqual(second, fresh(ctx, { format: "openai" }));
  // The window slid: the first turn after the pinned one is gone.
  const firstTexts = new Set(first.map((m) => m.content));
  assert.ok(!second.every((m) => firstTexts.has(m.content)), "new turns came in");
  assert.ok(first.some((m) => !second.some((n) => n.content === m.content)), "old turns left");
  const reused = second.filter((m) => first.includes(m)).length;
  const stillThere = second.filter((m) => firstTexts.has(m.content)).length;
  assert.ok(reused >= stillThere - 3, `${reused} of the ${stillThere} kept turns shared`);
});

test("every format's request shares the items of a slid window that render the same", async () => {
  const lists = { anthropic: "messages", "openai-responses": "input", gemini: "contents", "ai-sdk": "messages" };
  for (const [format, key] of Object.entries(lists)) {
    const s = new Session({ sessionId: `sliding-${format}` });
    for (let i = 0; i < 60; i++) turn(s, i);
    const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity })] });
    const options = { systemPrompt: "You are terse." };
    const first = (await compiler.compile(s, 900, options)).toMessages({ format })[key];
    for (let i = 60; i < 63; i++) turn(s, i);
    const ctx = await compiler.compile(s, 900, options);
    const request = ctx.toMessages({ format });
    assert.deepEqual(request, fresh(ctx, { format }), format);
    const second = request[key];
    const text = (item) => JSON.stringify(item);
    const before = new Set(first.map(text));
    // The window slid: items left from the start and came at the end.
    assert.ok(first.some((item) => !second.some((n) => text(n) === text(item))), `${format}: old turns left`);
    const stillThere = second.filter((item) => before.has(text(item)));
    const reused = second.filter((item) => first.includes(item));
    assert.ok(stillThere.length > 10, `${format}: ${stillThere.length} items kept`);
    assert.equal(reused.length, stillThere.length, `${format}: every item that renders the same is shared`);
    assert.ok(reused.every((item) => Object.isFrozen(item)), format);
  }
});
