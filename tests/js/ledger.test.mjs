// ctx.ledger: what a compiled context holds and why (each part's zone,
// events, reason and tokens, adding up to tokenCount in the session's own
// counter) and what the compile left out.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ArtifactAttacher, Compactor, ContextCompiler, HistoryRecall, HistorySelector, MemoryArtifactStore, Session,
  WorkingContext, runCompiled,
} from "agent-context-compiler";

const sum = (parts) => parts.reduce((n, p) => n + p.tokens, 0);

/** The README's zoned pipeline (externalising at 1,000 bytes), then `more`. */
const pipeline = (...more) =>
  new ContextCompiler({
    layout: "zoned",
    processors: [
      new HistorySelector({ keepFirst: 1, keepLast: Infinity }),
      new ArtifactAttacher(new MemoryArtifactStore(), { thresholdBytes: 1_000 }),
      new Compactor(),
      ...more,
    ],
  });

async function toolLoop(session, turns) {
  for (let i = 0; i < turns; i++) {
    session.record("user_input", `step ${i}: check the deploy of service ${i} and its logs`);
    const call = session.record("tool_call", { call_id: `c${i}`, tool_name: "read_logs", arguments: { service: i } });
    session.record("tool_success", { call_id: `c${i}`, tool_name: "read_logs", result: `line ${i} ok\n`.repeat(i % 5 === 0 ? 400 : 5) });
    session.record("assistant_output", `service ${i} is healthy (${call.eventId})`);
  }
}

test("a zoned compile's ledger adds up to tokenCount, part by part, with the events behind each", async () => {
  const s = new Session({ sessionId: "ledger" });
  s.record("user_input", "My dentist appointment is at the Alfama clinic on Tuesday.");
  await toolLoop(s, 30);
  const question = s.record("user_input", "Which clinic is my dentist appointment at?").eventId;
  const compiler = pipeline(new HistoryRecall({ minDistinction: 0 }));
  const ctx = await compiler.compile(s, 3_000, {
    systemPrompt: "You are an operations assistant.",
    goal: "keep the services healthy",
    taskState: "answer the question",
    tools: [{ name: "read_logs", description: "Read a service's logs", parameters: { type: "object", properties: { service: { type: "number" } } } }],
  });
  const { included, excluded } = ctx.ledger;
  assert.equal(sum(included), ctx.tokenCount);
  for (const zone of ["system", "persistent", "working", "recent"]) {
    assert.equal(sum(included.filter((p) => p.zone === zone)), ctx.zoneUsage[zone], zone);
  }
  const reasons = new Set(included.map((p) => p.reason));
  for (const reason of ["system", "tools", "pinned", "selected", "goal", "task"]) assert.ok(reasons.has(reason), `${reason} in ${[...reasons]}`);
  assert.ok(reasons.has("summary") || reasons.has("masked") || reasons.has("externalised"), [...reasons].join());
  // Every event id the ledger names is one of the session's.
  const ids = new Set(s.eventLog.events.map((e) => e.eventId));
  for (const part of [...included, ...excluded]) {
    for (const id of part.eventIds) assert.ok(ids.has(id), `${id} (${part.reason}) is the session's`);
  }
  // The question is in RECENT, selected.
  assert.ok(included.some((p) => p.zone === "recent" && p.reason === "selected" && p.eventIds.includes(question)));
  // What was left out is dropped's, by reason.
  assert.equal(excluded.length, ctx.dropped.length);
  const byAction = { dropped: "budget", truncated: "budget", summarized: "compacted", masked: "masked", refused: "refused" };
  ctx.dropped.forEach((d, i) => assert.equal(excluded[i].reason, byAction[d.action]));
  assert.deepEqual(ctx.ledger, ctx.ledger, "the same ledger each read");
});

test("the ledger counts in the session's own counter, and a context built by hand has one too", async () => {
  const chars = (text) => text.length;
  const s = new Session({ tokenCounter: chars });
  for (let i = 0; i < 20; i++) s.record(i % 2 ? "assistant_output" : "user_input", `message ${i} `.repeat(6));
  const compiler = new ContextCompiler({ processors: [new HistorySelector({ keepFirst: 1, keepLast: 100 })] });
  const ctx = await compiler.compile(s, 800, { systemPrompt: "Be brief." });
  assert.equal(ctx.layout, "single-system");
  assert.equal(sum(ctx.ledger.included), ctx.tokenCount);
  assert.ok(ctx.ledger.included.some((p) => p.reason === "system" && p.zone === "system"));

  const byHand = new WorkingContext({
    systemPrompt: "Be brief.",
    history: [{ role: "assistant", content: "Hello!" }, { role: "user", content: "Hi" }],
    layout: "zoned",
  });
  const reasons = byHand.ledger.included.map((p) => p.reason);
  assert.deepEqual(reasons, ["system", "placeholder", "selected", "selected"]);
  assert.ok(byHand.ledger.included.every((p) => p.tokens > 0));
});

test("turns the window never reached are one window entry; a run's result carries its last compile's ledger", async () => {
  const s = new Session({ sessionId: "window" });
  for (let i = 0; i < 30; i++) {
    s.record("user_input", `question ${i} about service ${i}`);
    s.record("assistant_output", `answer ${i}: service ${i} is up`);
  }
  const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: 6 })] });
  const ctx = await compiler.compile(s, 50_000, { systemPrompt: "Be brief." });
  const { included, excluded } = ctx.ledger;
  const named = new Set([...included, ...excluded].flatMap((p) => p.eventIds));
  const unreached = s.eventLog.events.filter((e) => !named.has(e.eventId));
  const window = excluded.filter((e) => e.reason === "window");
  assert.equal(window.length, 1);
  assert.ok(unreached.length > 40);
  assert.equal(window[0].count, unreached.length);
  assert.equal(window[0].tokens, unreached.reduce((n, e) => n + e.tokenEstimate, 0));
  assert.ok(excluded.filter((e) => e.reason !== "window").every((e) => !("count" in e)));

  const { session, steps, ledger } = await runCompiled("and service 31?", {
    budget: 50_000, session: s, compiler, model: () => "up too",
  });
  assert.equal(session, s);
  assert.deepEqual(ledger, steps.at(-1).ledger);
  // The run's compile read the 60 events and the new question.
  const runNamed = new Set([...ledger.included, ...ledger.excluded].flatMap((p) => p.eventIds));
  const runUnreached = s.eventLog.events.slice(0, 61).filter((e) => !runNamed.has(e.eventId));
  assert.equal(ledger.excluded.find((e) => e.reason === "window").count, runUnreached.length);
});

test("the ledger handed over in columns names ids of any script, the turns a summary stands for once per entry, and each read is a fresh object", async () => {
  // A session whose event ids are not ASCII (an import keeps them as
  // written): the columns give each id's length in UTF-16 code units.
  const recorded = new Session({ sessionId: "columns" });
  recorded.record("user_input", "My dentist appointment is at the Alfama clinic on Tuesday.");
  await toolLoop(recorded, 24);
  const data = JSON.parse(recorded.exportJson());
  const scripts = ["é", "日本", "😀", "a"];
  data.events.forEach((e, i) => {
    e.eventId = `${scripts[i % scripts.length]}-${i}-${"x".repeat(i % 7)}`;
  });
  const s = Session.importJson(JSON.stringify(data));
  const selecting = new ContextCompiler({
    layout: "zoned",
    processors: [new HistorySelector({ keepFirst: 1, keepLast: 12 })],
  });
  const selected = await selecting.compile(s, 50_000, { systemPrompt: "Be brief." });
  const seen = selected.ledger;
  assert.equal(sum(seen.included), selected.tokenCount);
  const ids = new Set(s.eventLog.events.map((e) => e.eventId));
  const named = new Set([...seen.included, ...seen.excluded].flatMap((p) => p.eventIds));
  assert.ok(named.size > 10, `${named.size} ids named`);
  assert.ok([...named].some((id) => id.startsWith("😀")) && [...named].some((id) => id.startsWith("日本")));
  for (const id of named) assert.ok(ids.has(id), `${id} is the session's`);
  const unreached = s.eventLog.events.filter((e) => !named.has(e.eventId));
  const window = seen.excluded.find((e) => e.reason === "window");
  assert.equal(window.count, unreached.length);
  assert.equal(window.tokens, unreached.reduce((n, e) => n + e.tokenEstimate, 0));
  // The history as the context holds it, in the ledger's order.
  assert.deepEqual(
    seen.included.filter((p) => p.reason === "selected" || p.reason === "pinned").map((p) => p.eventIds[0]),
    selected.history.map((h) => h.eventId ?? h.toolCalls?.[0]?.eventId),
  );
  selected.free();

  // The turns a summary stands for: its part and its `compacted` entries.
  const compiler = pipeline();
  await compiler.compile(s, 2_000);
  const compacted = (await compiler.compile(s, 2_000)).ledger;
  const summary = compacted.included.find((p) => p.reason === "summary");
  const folded = compacted.excluded.filter((e) => e.reason === "compacted").flatMap((e) => e.eventIds);
  assert.ok(folded.length > 10, `${folded.length} folded`);
  for (const id of folded) assert.ok(summary.eventIds.includes(id) && ids.has(id), id);

  const ctx = await compiler.compile(s, 2_000);
  const first = ctx.ledger;
  first.included.length = 0;
  first.excluded[0].eventIds.push("changed");
  const second = ctx.ledger;
  assert.ok(second.included.length > 0);
  assert.ok(!second.excluded[0].eventIds.includes("changed"));
  assert.notEqual(first, second);
  ctx.free();
});

test("reading the ledger of a freed context throws, read before or not", async () => {
  const s = new Session();
  for (let i = 0; i < 5; i++) s.record(i % 2 ? "assistant_output" : "user_input", `message ${i}`);
  const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector()] });
  for (const readFirst of [true, false]) {
    const ctx = await compiler.compile(s, 1_000);
    if (readFirst) assert.ok(ctx.ledger.included.length > 0);
    ctx.free();
    assert.throws(() => ctx.ledger, (e) => e.code === "INVALID_ARGUMENT", `read first: ${readFirst}`);
  }
});
