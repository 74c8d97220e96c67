// The look-back tools from JS: runCompiled({ lookBackTools: true }) offers
// search_history and read_artifact in the run's format and records their
// calls; read_artifact pages an externalised output back whole.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { HistoryRecall, MemoryArtifactStore, Session, attachMedia, lookBackToolDefinitions, runCompiled } from "agent-context-compiler";

test("lookBackToolDefinitions gives both tools with JSON Schemas", () => {
  const defs = lookBackToolDefinitions();
  assert.deepEqual(defs.map((d) => d.name), ["search_history", "read_artifact"]);
  assert.deepEqual(defs[0].parameters.required, ["query"]);
  assert.deepEqual(defs[1].parameters.required, ["handle"]);
});

test("a run with lookBackTools searches the history, in the OpenAI format, with no bridge", async () => {
  const session = new Session({ sessionId: "look" });
  session.record("user_input", { content: "My passport expires in June 2031." });
  for (let i = 0; i < 20; i++) session.record("assistant_output", { content: `chatter ${i}` });
  const offered = [];
  const model = async (messages, { tools, step }) => {
    offered.push(tools.map((t) => t.function.name));
    if (step === 0) return { toolCalls: [{ id: "c1", name: "search_history", arguments: { query: "passport expires" } }] };
    const tool = messages.find((m) => m.role === "tool");
    return { content: JSON.parse(tool.content).results.some((r) => r.text.includes("June 2031")) ? "June 2031" : "unknown" };
  };
  const run = await runCompiled("When does my passport expire?", { session, budget: 4000, model, lookBackTools: true });
  assert.equal(run.result, "June 2031");
  assert.deepEqual(offered[0], ["search_history", "read_artifact"]);
  assert.equal(run.steps[0].toolEvents[0].kind, "tool_success");
  const kinds = session.eventLog.events.map((e) => e.kind);
  assert.deepEqual(kinds.slice(-3), ["tool_call", "tool_success", "assistant_output"]);
  session.free();
});

test("an output the budget holds is read whole on the next call; a handle from the call after", async () => {
  const store = new MemoryArtifactStore();
  const file = Array.from({ length: 300 }, (_, i) => `ligne ${i}: café 東京 ✓\n`).join("");
  const seen = [];
  const model = async (messages, { step }) => {
    seen.push(messages.filter((m) => m.role === "tool").map((m) => m.content));
    if (step === 0) return { toolCalls: [{ id: "f", name: "read_file", arguments: {} }] };
    if (step === 1) return { toolCalls: [{ id: "g", name: "read_file", arguments: {} }] };
    return { content: "read" };
  };
  const run = await runCompiled("Read the file twice", {
    budget: 8000, model, artifactStore: store, externalizeThreshold: 4096,
    tools: [{ name: "read_file", description: "reads the file" }], bridge: () => file,
  });
  assert.equal(run.result, "read");
  assert.deepEqual(seen[1], [file], "the just-requested output, whole");
  assert.match(seen[2][0], /^\[artifact [0-9a-f]{64} /, "read once: its handle from then on");
  assert.equal(seen[2][1], file);
  run.session.free();
});

test("read_artifact pages an output larger than the budget back whole; a bad handle is a tool error", async () => {
  const store = new MemoryArtifactStore();
  const big = Array.from({ length: 2000 }, (_, i) => `ligne ${i}: café 東京 ✓\n`).join("");
  let handle = null;
  let next = 0;
  const pages = [];
  const model = async (messages, { step }) => {
    const tool = messages.filter((m) => m.role === "tool").at(-1);
    if (step === 0) return { toolCalls: [{ id: "big", name: "big", arguments: {} }] };
    let length = 16000;
    // A page the budget cannot hold asks for a smaller one.
    const smaller = /read it again with a length of at most (\d+)/.exec(tool.content);
    if (step === 1) handle = /\b([0-9a-f]{64})\b/.exec(tool.content)[1];
    else if (smaller !== null) length = Number(smaller[1]);
    else {
      const page = JSON.parse(tool.content);
      pages.push(page.text);
      next = page.nextOffset;
      if (next === null) return { content: "read" };
    }
    return { toolCalls: [{ id: `r${step}`, name: "read_artifact", arguments: { handle, offset: next, length } }] };
  };
  const run = await runCompiled("Read the big output", {
    budget: 8000, model, lookBackTools: true, maxSteps: 20, artifactStore: store, externalizeThreshold: 4096,
    tools: [{ name: "big", description: "a big output" }],
    bridge: (name) => (name === "big" ? big : Promise.reject(new Error("no such tool"))),
  });
  assert.equal(run.result, "read");
  assert.equal(pages.join(""), big);
  // The stored output is found by any part; a loaded session reads it from the store first.
  const kindOf = (session) => session.search("437", { limit: 1 })[0]?.kind;
  assert.equal(kindOf(run.session), "tool_success");
  const loaded = Session.importJson(run.session.exportJson());
  assert.notEqual(kindOf(loaded), "tool_success");
  assert.equal(await loaded.indexStoredOutputs(store), 1);
  assert.equal(kindOf(loaded), "tool_success");
  assert.equal(await loaded.indexStoredOutputs(store), 0, "each once");
  await assert.rejects(loaded.indexStoredOutputs(42), { code: "INVALID_ARGUMENT" });
  assert.throws(() => new HistoryRecall({ artifactStore: {} }), { code: "INVALID_ARGUMENT" });
  new HistoryRecall({ artifactStore: store }).free();
  loaded.free();
  const bad = await runCompiled("Read something", {
    budget: 4000, lookBackTools: true, artifactStore: store, bridge: () => "x",
    model: async (_m, { step }) => (step === 0 ? { toolCalls: [{ id: "x", name: "read_artifact", arguments: { handle: "nope" } }] } : { content: "done" }),
  });
  assert.equal(bad.steps[0].toolEvents[0].kind, "tool_error");
  assert.match(bad.steps[0].toolEvents[0].error, /no stored output/);
  bad.session.free();
  run.session.free();
});

test("lookBackTools must be a boolean", async () => {
  await assert.rejects(runCompiled("hi", { budget: 100, model: async () => ({ content: "x" }), lookBackTools: "yes" }), { code: "INVALID_ARGUMENT" });
});

test("lookBackTools with an artifactStore and no bridge: read_artifact reads the session's stored output and its images reach the model", async () => {
  const store = new MemoryArtifactStore();
  // A session whose earlier run stored an output (as the handler records it).
  const text = Array.from({ length: 200 }, (_, i) => `row ${i}: ok`).join("\n");
  const handle = (await store.store(text, "tool:dump", { sessionId: "stored" })).artifactId;
  const chart = await attachMedia(store, new Uint8Array(readFileSync(new URL("../fixtures/media/chart.png", import.meta.url))));
  const session = new Session({ sessionId: "stored" });
  session.record("user_input", { content: "Dump the table, and here is the chart.", media: [chart] });
  session.record("artifact_stored", { handle, source: "tool:dump", size_bytes: text.length });
  let page = null;
  let first = null;
  const model = async (messages, { step }) => {
    if (step === 0) {
      first = messages;
      return { toolCalls: [{ id: "r1", name: "read_artifact", arguments: { handle, length: 20 } }] };
    }
    page = JSON.parse(messages.filter((m) => m.role === "tool").at(-1).content);
    return { content: "read" };
  };
  const run = await runCompiled("What is in row 0?", { session, budget: 4000, model, lookBackTools: true, artifactStore: store });
  assert.equal(run.steps[0].toolEvents[0].kind, "tool_success", run.steps[0].toolEvents[0].error);
  assert.equal(page.text, text.slice(0, 20));
  // The stored image is sent as an image, not as a reference line.
  const parts = first.filter((m) => m.role === "user" && Array.isArray(m.content)).flatMap((m) => m.content);
  assert.ok(parts.some((p) => p.type === "image_url" && p.image_url.url.startsWith("data:image/png;base64,")), JSON.stringify(first));
  session.free();
});
