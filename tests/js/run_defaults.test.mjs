// runCompiled's defaults are the recommended pipeline: every turn that fits
// reaches the model, stored outputs can be read back with the look-back
// tools (on by default), memories come with `memory`, and recall never
// crowds out the window.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ContextCompiler, HistorySelector, InMemoryBackend, MemoryArtifactStore, Session, runCompiled } from "agent-context-compiler";
import { rejectsWithCode } from "./helpers.mjs";

test("a 40-turn conversation that fits the budget reaches the model whole, nothing dropped", async () => {
  const session = new Session();
  for (let i = 1; i <= 40; i++) {
    session.record("user_input", { content: `Question ${i}: what about item ${i}?` });
    session.record("assistant_output", { content: `Answer ${i}: item ${i} is fine.` });
  }
  let seen;
  const run = await runCompiled("And item 41?", { session, budget: 32_000, model: (messages) => ((seen = messages), "fine") });
  const users = seen.filter((m) => m.role === "user").map((m) => m.content).join("\n");
  for (let i = 1; i <= 40; i++) assert.ok(users.includes(`Question ${i}:`), `turn ${i} reaches the model`);
  assert.ok(users.includes("And item 41?"));
  assert.deepEqual(run.dropped, []);
  assert.equal(run.steps[0].compactionLevel, "none");
  session.free();
});

test("the look-back tools are offered by default and read an externalised output back; lookBackTools: false offers only the run's tools", async () => {
  const store = new MemoryArtifactStore();
  // More than the budget holds: the model gets its handle and pages through it.
  const log = Array.from({ length: 4000 }, (_, i) => `line ${i}: ${i === 2111 ? "ERROR disk quota exceeded" : "ok, the step finished in time"}`).join("\n");
  const offered = [];
  let read = "";
  let handle;
  const model = async (messages, { tools, step }) => {
    offered.push(tools.map((t) => t.function.name));
    const tool = messages.filter((m) => m.role === "tool").at(-1);
    if (step === 0) return { toolCalls: [{ id: "a", name: "read_log", arguments: {} }] };
    let offset = 0;
    if (step === 1) handle = /\b([0-9a-f]{64})\b/.exec(tool.content)[1];
    else {
      const page = JSON.parse(tool.content);
      read += page.text;
      if (page.nextOffset === null) return "line 2111 failed";
      offset = page.nextOffset;
    }
    return { toolCalls: [{ id: `b${step}`, name: "read_artifact", arguments: { handle, offset, length: 8192 } }] };
  };
  const tools = [{ name: "read_log", description: "the job's log" }];
  const run = await runCompiled("Why did the job fail?", { budget: 8000, model, tools, artifactStore: store, bridge: () => log, maxSteps: 40 });
  assert.equal(run.result, "line 2111 failed");
  assert.deepEqual(offered[0], ["read_log", "search_history", "read_artifact"]);
  assert.equal(read, log, "the handle is no dead end");
  assert.ok(run.steps[1].messages > 0);

  const plain = [];
  await runCompiled("hi", { budget: 4000, tools, lookBackTools: false, bridge: () => "x", model: (_m, { tools }) => (plain.push(tools.map((t) => t.function.name)), "hello") });
  assert.deepEqual(plain, [["read_log"]]);
  // Without tools of its own, a run offers the look-back tools and its
  // bridge still takes any name (as before they were offered).
  const open = await runCompiled("add", {
    budget: 4000, bridge: (name) => `${name} ran`,
    model: (_m, { step }) => (step === 0 ? { toolCalls: [{ name: "anything" }] } : "done"),
  });
  assert.equal(open.steps[0].toolEvents[0].result, "anything ran");
});

test("memory recalls into the default pipeline; with a compiler of one's own it is refused", async () => {
  const memory = new InMemoryBackend();
  memory.store("oncall", "The nightly job writes to db-primary", "core");
  let seen;
  await runCompiled("Where does the nightly job write?", { budget: 4000, memory, model: (m) => ((seen = m), "db-primary") });
  assert.match(seen.at(-1).content, /db-primary/);
  assert.equal(seen.at(-1).role, "user", "memories are never system text");
  const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector()] });
  await rejectsWithCode(() => runCompiled("x", { budget: 4000, memory, compiler, model: () => "y" }), "INVALID_ARGUMENT", "MemoryPreloader");
  await rejectsWithCode(() => runCompiled("x", { budget: 4000, memory: 42, model: () => "y" }), "INVALID_ARGUMENT");
  compiler.free();
});

test("recall in a long tool loop never pushes compaction nor fills more than the window leaves below 80%", async () => {
  const session = new Session();
  const budget = 8000;
  const runs = [];
  for (let turn = 1; turn <= 30; turn++) {
    const log = Array.from({ length: 60 }, (_, i) => `02:${String(i).padStart(2, "0")} job step ${i} ok rows=${turn * 100 + i}`);
    if (turn === 3) log[41] = "02:41 job step 41 ERROR volume vol-7781 over quota";
    const question = turn < 12 ? `Turn ${turn}: check the nightly job again` : `Turn ${turn}: is volume vol-7781 still over quota?`;
    const run = await runCompiled(question, {
      session, budget, tools: [{ name: "read_log", description: "the log" }], bridge: () => log.join("\n"),
      model: (_m, { step }) => (step === 0 ? { toolCalls: [{ name: "read_log" }] } : `Turn ${turn}: fine.`),
    });
    runs.push(run);
    for (const step of run.steps) {
      assert.ok(step.budgetUsed <= budget);
      assert.notEqual(step.compactionLevel, "emergency");
    }
  }
  const recalled = runs.flatMap((r) => r.recalled).filter((t) => t.role === "tool");
  assert.ok(recalled.length > 0, "recall ran");
  // A recalled output is its matching line and where to read it whole.
  for (const turn of recalled) assert.ok(turn.content.length < 700, turn.content);
  assert.ok(recalled.some((t) => t.content.startsWith(`read_log [${t.eventId}]: 02:41 job step 41 ERROR volume vol-7781`)), JSON.stringify(recalled));
  session.free();
});
