// agent-context-compiler/openai-agents through the Agents SDK's default
// model (OpenAIResponsesModel) over a scripted fetch that plays the
// Responses API: every HTTP body is within budget (o200k) with the tools the
// SDK sends, holds the turn's question, pairs every call, passes
// checkRequest and carries no field outside the Responses request type (the
// integration's bookkeeping never reaches the wire); the model reads what it
// asked for, with the look-back tools agentsSession gives for the rest;
// assistant items without ids are recorded once.
import { test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { Agent, OpenAIResponsesModel, handoff, run, setTracingDisabled, tool } from "@openai/agents";
import { agentsSession } from "agent-context-compiler/openai-agents";
import { checkRequest } from "agent-context-compiler";
import { extraFields, replyBody, scriptedApi } from "./wire/index.mjs";
import { BUDGET, SECRET, SYSTEM, TOOL_SPECS, TURNS, assertReadsWhatItAskedFor, codingModel, recommended, requestProblems, runTool, turnPlan } from "./coding_loop.mjs";

setTracingDisabled(true);

/** The app's tools, run by the SDK. */
const appTools = TOOL_SPECS.map((s) => tool({ name: s.name, description: s.description, parameters: s.parameters, strict: true, execute: async (args) => runTool(s.name, args) }));

/** `reply` (for scriptedApi) answering with message items that have no id, as some providers' adapters give them. */
const withoutIds = (reply) => (request) => {
  const scripted = reply(request);
  const body = replyBody(request.api, scripted, { body: request.body, seq: request.index + 1 });
  for (const item of body.output) if (item.type === "message") delete item.id;
  return { rawBody: body };
};

/** Runs the 30-turn coding loop through an agent on OpenAIResponsesModel. */
async function codingLoop({ idless = false } = {}) {
  const { session: mine, store, compiler } = await recommended(idless ? "agents-idless" : "agents");
  const { reply, measured } = codingModel({ idPrefix: "call_" });
  const api = scriptedApi({ reply: idless ? withoutIds(reply) : reply });
  const compiles = [];
  const { session, callModelInputFilter, tools } = agentsSession({ session: mine, compiler, budget: BUDGET, artifactStore: store, onCompile: (ctx) => compiles.push(ctx.ledger) });
  const model = new OpenAIResponsesModel(new OpenAI({ apiKey: "test", fetch: api.fetch, maxRetries: 0 }), "gpt-4.1");
  const agent = new Agent({ name: "coder", instructions: SYSTEM, model, tools: [...appTools, ...tools] });
  for (let t = 1; t <= TURNS; t++) {
    const result = await run(agent, turnPlan(t).question, { session, callModelInputFilter, maxTurns: 20 });
    assert.match(result.finalOutput, new RegExp(`^Turn ${t}: `));
  }
  return { mine, api, measured, compiles };
}

for (const idless of [false, true]) {
  test(`a 30-turn Agents SDK coding loop on OpenAIResponsesModel${idless ? ", assistant items without ids" : ""}: every body within budget with its tools, paired, checked, no stray field; the model reads what it asked for`, async () => {
    const { mine, api, measured, compiles } = await codingLoop({ idless });
    try {
      assert.ok(api.requests.every((r) => r.api === "openai-responses"));
      assertReadsWhatItAskedFor(api.requests, measured, (r) => [...extraFields(r), ...checkRequest(r.body, { format: "openai-responses" })]);
      assert.ok(api.requests.every((r) => !/agent_?context_?compiler/i.test(r.bodyText)), "no bookkeeping on the wire");
      // The tools the SDK sends are counted in the compile.
      assert.ok(api.requests.every((r) => r.body.tools.length === 5));
      assert.ok(compiles.every((l) => l.included.some((p) => p.reason === "tools" && p.tokens > 300)), "tools counted");
      // Every item recorded once.
      const events = mine.eventLog.events;
      const calls = events.filter((e) => e.kind === "tool_call");
      assert.equal(calls.length, api.requests.length - TURNS);
      assert.deepEqual(events.filter((e) => ["tool_success", "tool_error"].includes(e.kind)).map((e) => e.data.call_id), calls.map((e) => e.data.call_id));
      assert.equal(events.filter((e) => e.kind === "user_input").length, TURNS);
      assert.deepEqual(events.filter((e) => e.kind === "assistant_output").map((e) => e.data.text), Array.from({ length: TURNS }, (_, i) => (i + 1 === TURNS ? `Turn ${TURNS}: the staging database is pg-orca-17.` : `Turn ${i + 1}: done.`)));
      assert.equal(events.filter((e) => e.kind === "model_usage").length, api.requests.length);
      assert.ok(!mine.exportJson().includes(SECRET));
    } finally {
      mine.free();
    }
  });
}

test("an assistant item without an id, with its call, is recorded once and before its result", async () => {
  const { session: mine, compiler } = await recommended("agents-order");
  const api = scriptedApi({
    reply: withoutIds((r) =>
      r.body.input.some((i) => i.type === "function_call_output") ? { text: "Turn 1: done." } : { text: "Let me look.", toolCalls: [{ id: "call_1", name: "read_file", arguments: { path: "src/module_3.rs" } }] },
    ),
  });
  const { session, callModelInputFilter } = agentsSession({ session: mine, compiler, budget: BUDGET, lookBackTools: false });
  const agent = new Agent({ name: "coder", instructions: SYSTEM, model: new OpenAIResponsesModel(new OpenAI({ apiKey: "test", fetch: api.fetch, maxRetries: 0 }), "gpt-4.1"), tools: appTools });
  await run(agent, "Turn 1: read src/module_3.rs", { session, callModelInputFilter });
  const kinds = mine.eventLog.events.map((e) => e.kind).filter((k) => k !== "model_usage" && k !== "artifact_stored");
  assert.deepEqual(kinds, ["user_input", "assistant_output", "tool_call", "tool_success", "assistant_output"]);
  mine.free();
});

test("the filter counts the tools and enabled handoffs the SDK sends: input plus tools within the budget", async () => {
  const { session: mine, compiler } = await recommended("agents-tools");
  const ledgers = [];
  const budget = 4000;
  const api = scriptedApi({ reply: { text: "Hello." } });
  const { session, callModelInputFilter } = agentsSession({ session: mine, compiler, budget, lookBackTools: false, onCompile: (ctx) => ledgers.push(ctx.ledger) });
  const helper = new Agent({ name: "helper", instructions: "Help." });
  const bigTools = Array.from({ length: 12 }, (_, i) =>
    tool({ name: `tool_${i}`, description: `Tool ${i}: ${"does a careful thing with the repository. ".repeat(8)}`, parameters: { type: "object", properties: { a: { type: "string", description: "x".repeat(200) } }, required: ["a"], additionalProperties: false }, execute: async () => "ok" }),
  );
  const disabled = handoff(new Agent({ name: "hidden", instructions: "No." }), { isEnabled: false });
  const agent = new Agent({ name: "coder", instructions: SYSTEM, model: new OpenAIResponsesModel(new OpenAI({ apiKey: "test", fetch: api.fetch, maxRetries: 0 }), "gpt-4.1"), tools: bigTools, handoffs: [helper, disabled] });
  for (let t = 1; t <= 6; t++) await run(agent, `Turn ${t}: ${"Tell me about the repository layout and its conventions. ".repeat(40)}`, { session, callModelInputFilter });
  const sent = api.requests.map((r) => r.body.tools.map((x) => x.name));
  assert.ok(sent.every((names) => names.includes("transfer_to_helper") && !names.includes("transfer_to_hidden")));
  const tools = ledgers.map((l) => l.included.filter((p) => p.reason === "tools").reduce((n, p) => n + p.tokens, 0));
  assert.ok(tools.every((n) => n > 1000), `${tools}`);
  assert.deepEqual(requestProblems(api.requests, { budget }), []);
  mine.free();
});

test("agentsSession's options are checked; the look-back tools are Agents SDK tools", async () => {
  const { session: mine, compiler } = await recommended("agents-options");
  assert.throws(() => agentsSession({ session: mine, compiler, budget: 1, lookbacktools: false }), { code: "INVALID_ARGUMENT", message: /did you mean lookBackTools/ });
  assert.throws(() => agentsSession({ session: mine, compiler, budget: 1, artifactStore: 3 }), { code: "INVALID_ARGUMENT" });
  assert.deepEqual(agentsSession({ session: mine, compiler, budget: 1, lookBackTools: false }).tools, []);
  const { tools } = agentsSession({ session: mine, compiler, budget: 1 });
  assert.deepEqual(tools.map((t) => [t.type, t.name]), [["function", "search_history"], ["function", "read_artifact"]]);
  mine.free();
});

test("a call id a provider uses again, with other arguments, is a new call with its own result", async () => {
  const { session: mine, compiler } = await recommended("agents-reuse");
  const api = scriptedApi({
    reply: (r) => {
      const question = r.body.input.findLast((i) => i.role === "user");
      const turn = JSON.stringify(question).includes("module_6") ? 6 : 3;
      const answered = r.body.input.at(-1).type === "function_call_output";
      return answered ? { text: `Read module ${turn}.` } : { toolCalls: [{ id: "call_0", name: "read_file", arguments: { path: `src/module_${turn}.rs` } }] };
    },
  });
  const { session, callModelInputFilter } = agentsSession({ session: mine, compiler, budget: BUDGET, lookBackTools: false });
  const agent = new Agent({ name: "coder", instructions: SYSTEM, model: new OpenAIResponsesModel(new OpenAI({ apiKey: "test", fetch: api.fetch, maxRetries: 0 }), "gpt-4.1"), tools: appTools });
  await run(agent, "Read src/module_3.rs", { session, callModelInputFilter });
  await run(agent, "Now read src/module_6.rs", { session, callModelInputFilter });
  const calls = mine.eventLog.events.filter((e) => e.kind === "tool_call").map((e) => e.data.arguments.path);
  assert.deepEqual(calls, ["src/module_3.rs", "src/module_6.rs"]);
  assert.equal(mine.eventLog.events.filter((e) => e.kind === "tool_success").length, 2);
  mine.free();
});
