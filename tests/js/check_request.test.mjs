// checkRequest: the providers' rules as data, for requests the package
// renders (none broken, in every format) and for requests written by hand
// (each broken rule named with the JSON pointer of what breaks it).
import { test } from "node:test";
import assert from "node:assert/strict";
import { ContextCompiler, HistorySelector, Compactor, Session, checkRequest } from "agent-context-compiler";

const FORMATS = ["plain", "openai", "openai-responses", "anthropic", "gemini", "ai-sdk"];

test("what toMessages renders in every format breaks no rule, whatever the session held", async () => {
  const s = new Session();
  s.record("assistant_output", { content: "Hi! How can I help?" });
  s.record("user_input", { content: "Check the disk." });
  s.record("tool_call", { tool_name: "df", call_id: "c1", arguments: {} });
  s.record("tool_success", { tool: "df", call_id: "c1", result: "92%" });
  s.record("tool_success", { tool: "multi_tool_use.parallel", call_id: "toolu_01.A", result: "orphan" });
  s.record("tool_call", { tool_name: "du", call_id: "c2", arguments: { path: "/data" } });
  s.record("user_input", { content: "   " });
  s.record("user_input", { content: "And now?" });
  const ctx = await new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity }), new Compactor()] })
    .compile(s, 2000, { systemPrompt: "You are an SRE." });
  for (const format of FORMATS) {
    const request = format === "plain" ? ctx.toMessages() : ctx.toMessages({ format });
    assert.deepEqual(checkRequest(request, { format }), [], format);
  }
  ctx.free();
  s.free();
});

test("a request written by hand: each broken rule, with where", () => {
  const problems = checkRequest([{ role: "tool", tool_call_id: "c", content: "x" }], { format: "openai" });
  assert.deepEqual(problems, [{ rule: "openai.result_follows_call", path: "/0", message: problems[0].message }]);
  assert.match(problems[0].message, /"c"/);
  const gemini = checkRequest({ contents: [{ role: "model", parts: [{ text: "hi" }] }] }, { format: "gemini" });
  assert.deepEqual(gemini.map((p) => p.rule), ["gemini.first_user"]);
  const responses = checkRequest(
    { input: [{ type: "message", role: "user", content: "q" }, { type: "function_call", call_id: "a", name: "t", arguments: "{" }, { type: "message", role: "user", content: "q" }] },
    { format: "openai-responses" },
  );
  assert.deepEqual(responses.map((p) => [p.rule, p.path]), [["openai_responses.arguments", "/input/1"], ["openai_responses.call_answered", "/input/2"]]);
});

test("with a model, a cache breakpoint before the model's minimum cacheable length is flagged as wasted", () => {
  const request = { system: [{ type: "text", text: "You are helpful.", cache_control: { type: "ephemeral" } }], messages: [{ role: "user", content: "q" }] };
  assert.deepEqual(checkRequest(request, { format: "anthropic" }), []);
  const wasted = checkRequest(request, { format: "anthropic", model: "claude-sonnet-4-5" });
  assert.deepEqual(wasted.map((p) => [p.rule, p.path]), [["anthropic.cache_min_length", "/system/0"]]);
  assert.throws(() => checkRequest(request, { format: "anthropic", model: 4 }), { code: "INVALID_ARGUMENT" });
});

test("toMessages({ format: \"anthropic\", model }) leaves out the breakpoints that model would waste", async () => {
  const session = new Session();
  session.record("user_input", { text: "Why did the job fail?" });
  const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector()] });
  const short = await compiler.compile(session, 8000, { systemPrompt: "You are an SRE." });
  const marks = (r) => JSON.stringify(r).split("cache_control").length - 1;
  assert.ok(marks(short.toMessages({ format: "anthropic" })) > 0);
  const forSonnet = short.toMessages({ format: "anthropic", model: "claude-sonnet-4-5" });
  assert.equal(marks(forSonnet), 0);
  assert.deepEqual(checkRequest(forSonnet, { format: "anthropic", model: "claude-sonnet-4-5" }), []);
  const long = await compiler.compile(session, 8000, { systemPrompt: "Follow the runbook for every incident. ".repeat(200) });
  const kept = long.toMessages({ format: "anthropic", model: "claude-sonnet-4-5" });
  assert.deepEqual(kept.system[0].cache_control, { type: "ephemeral" });
  assert.deepEqual(checkRequest(kept, { format: "anthropic", model: "claude-sonnet-4-5" }), []);
  assert.throws(() => long.toMessages({ format: "anthropic", model: 3 }), { code: "INVALID_ARGUMENT" });
});

test("toMessages renders for the model the compile named unless given another", async () => {
  const session = new Session();
  session.record("user_input", { text: "Why did the job fail?" });
  const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector()] });
  const marks = (r) => JSON.stringify(r).split("cache_control").length - 1;
  const forSonnet = await compiler.compile(session, 8000, { systemPrompt: "You are an SRE.", model: "claude-sonnet-4-5" });
  const request = forSonnet.toMessages({ format: "anthropic" });
  assert.equal(marks(request), 0, "no mark under Sonnet's minimum, without passing the model twice");
  assert.deepEqual(request, forSonnet.toMessages({ format: "anthropic", model: "claude-sonnet-4-5" }));
  assert.deepEqual(checkRequest(request, { format: "anthropic", model: "claude-sonnet-4-5" }), []);
  // A model given to toMessages is the one rendered for.
  assert.ok(marks(forSonnet.toMessages({ format: "anthropic", model: "some-other-model" })) > 0);
  forSonnet.free();
  session.free();
});

test("checkRequest's options are checked", () => {
  for (const options of [undefined, {}, { format: "bard" }, { format: 7 }]) {
    assert.throws(() => checkRequest([], options), { code: "INVALID_ARGUMENT" }, JSON.stringify(options));
  }
  assert.throws(() => checkRequest(undefined, { format: "openai" }), { code: "NOT_SERIALIZABLE" });
});
