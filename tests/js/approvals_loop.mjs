// The approval loop the integrations' approval tests share: a release
// assistant whose model, over a scripted fetch, asks to delete two files
// (each waiting for a person) and list a directory (free), then, once those
// are answered, to deploy (waiting too), then answers. The person approves
// the first deletion, edits the second (another path) where the framework
// can, and rejects the deploy with a reason.
import assert from "node:assert/strict";
import { checkRequest } from "agent-context-compiler";
import { counted, extraFields, toolCallsIn, toolResultsIn } from "./wire/index.mjs";

export const SYSTEM = "You are a release assistant. Use the tools; deleting files and deploying wait for a person's approval.";
export const QUESTION = "Clean up build/: remove build/a.log and build/b.log, list what is left, then deploy to production.";
export const SECRET = "Zq8vN2mLk4Rt7Wx1Yb3Hc6Jd9Fg0Ps5Ue2Ai7Ko";
/** The rejection's reason, and the edited path of the second deletion. */
export const REASON = "not on a Friday: wait for Monday";
export const EDITED = { path: "build/b.old.log" };

/** The tools: `needsApproval` marks those that wait. */
export const TOOL_SPECS = [
  { name: "delete_file", description: "Deletes a file", needsApproval: true, parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"], additionalProperties: false } },
  { name: "list_dir", description: "Lists a directory", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"], additionalProperties: false } },
  { name: "deploy", description: "Deploys the build", needsApproval: true, parameters: { type: "object", properties: { env: { type: "string" } }, required: ["env"], additionalProperties: false } },
];

/** What a tool returns (the listing names a secret, which is redacted before it is recorded or sent). */
export function runTool(name, args) {
  if (name === "delete_file") return `deleted ${args.path}`;
  if (name === "list_dir") return `build/a.log\nbuild/b.log\nbuild/b.old.log\nbuild/.env: AWS_SECRET_ACCESS_KEY=${SECRET}`;
  if (name === "deploy") return `deployed to ${args.env}`;
  throw new Error(`no tool ${name}`);
}

/** The scripted model (`reply` for scriptedApi), its call ids prefixed with `prefix`. */
export function approvalModel(prefix = "call_") {
  const id = (n) => `${prefix}${n}`;
  // Chat Completions ids unique across processes (LangChain keeps messages by id).
  const replyId = (request) => (request.api === "openai-chat" ? { id: `chatcmpl-${process.pid}-${request.index}` } : {});
  return (request) => ({ ...replyId(request), ...scripted(request) });
  function scripted(request) {
    const answered = new Set(toolResultsIn(request).map((r) => r.id));
    if (answered.has(id(4))) return { text: "Removed the logs; the deploy was rejected, so it waits." };
    if ([1, 2, 3].every((n) => answered.has(id(n)))) return { toolCalls: [{ id: id(4), name: "deploy", arguments: { env: "production" } }] };
    return {
      toolCalls: [
        { id: id(1), name: "delete_file", arguments: { path: "build/a.log" } },
        { id: id(2), name: "list_dir", arguments: { path: "build" } },
        { id: id(3), name: "delete_file", arguments: { path: "build/b.log" } },
      ],
    };
  }
}

/** The o200k tokens of a request's body (system, messages and tools, as bench/peers.mjs counts them). */
export const bodyTokens = (request) => counted(request).total;

/**
 * Checks every request of a paused and resumed run: valid for `format`
 * (checkRequest, no stray field), every call in it answered (once), no
 * secret; the calls decided before it carry the decided arguments and
 * outcomes. `edited`: whether the framework edits calls.
 */
export function assertRequests(requests, { format, body = (r) => r.body, prefix = "call_", edited = true }) {
  assert.ok(requests.length >= 3, `${requests.length} requests`);
  for (const [i, r] of requests.entries()) {
    assert.deepEqual([...extraFields(r), ...checkRequest(body(r), { format })], [], `request ${i} is valid`);
    const results = toolResultsIn(r).map((x) => x.id);
    for (const c of toolCallsIn(r)) assert.equal(results.filter((x) => x === c.id).length, 1, `request ${i}: ${c.id} answered once`);
    assert.ok(!r.bodyText.includes(SECRET), `request ${i}: no secret`);
  }
  const last = requests.at(-1);
  const calls = new Map(toolCallsIn(last).map((c) => [c.id, c]));
  const outcomes = new Map(toolResultsIn(last).map((c) => [c.id, c.output]));
  assert.deepEqual([...calls.keys()].sort(), [1, 2, 3, 4].map((n) => `${prefix}${n}`));
  assert.match(outcomes.get(`${prefix}1`), /deleted build\/a\.log/);
  assert.deepEqual(calls.get(`${prefix}3`).arguments, edited ? EDITED : { path: "build/b.log" }, "the edited call is sent with its edited arguments");
  assert.match(outcomes.get(`${prefix}3`), edited ? /deleted build\/b\.old\.log/ : /deleted build\/b\.log/);
  assert.match(outcomes.get(`${prefix}4`), /not on a Friday/, "the rejection's reason is the deploy's outcome");
  assert.doesNotMatch(outcomes.get(`${prefix}4`), /deployed/);
}

/**
 * Checks the session's events: every event once, the three requests and
 * their decisions (`edited`: the second deletion's an edit), the deploy's
 * outcome a tool_error with the reason, a usage per model call.
 */
export function assertEvents(events, { prefix = "call_", edited = true, modelCalls }) {
  const kinds = (k) => events.filter((e) => e.kind === k);
  const ids = (k) => kinds(k).map((e) => e.data.call_id);
  assert.equal(kinds("user_input").length, 1, "the question once");
  assert.equal(kinds("assistant_output").length, 1, "the answer once");
  assert.deepEqual(ids("tool_call"), [1, 2, 3, 4].map((n) => `${prefix}${n}`), "each call once");
  assert.deepEqual(ids("approval_requested"), [1, 3, 4].map((n) => `${prefix}${n}`), "each wait once");
  assert.deepEqual(ids("approval_decided"), [1, 3, 4].map((n) => `${prefix}${n}`), "each decision once");
  const outcomes = events.filter((e) => ["tool_success", "tool_error", "tool_timeout"].includes(e.kind));
  assert.deepEqual(outcomes.map((e) => e.data.call_id).sort(), [1, 2, 3, 4].map((n) => `${prefix}${n}`), "each outcome once");
  const decision = (n) => kinds("approval_decided").find((e) => e.data.call_id === `${prefix}${n}`).data;
  assert.equal(decision(1).approve, true);
  assert.equal(decision(1).arguments, undefined);
  assert.equal(decision(3).approve, true);
  if (edited) assert.deepEqual(decision(3).arguments, EDITED, "the edit recorded");
  assert.equal(decision(4).approve, false);
  assert.match(decision(4).reason ?? "", /not on a Friday/);
  const deploy = outcomes.find((e) => e.data.call_id === `${prefix}4`);
  assert.equal(deploy.kind, "tool_error", "a rejected call's outcome is its error");
  // Each decision before its outcome, each request before its decision.
  for (const n of [1, 3, 4]) {
    const at = (k) => events.findIndex((e) => e.kind === k && e.data.call_id === `${prefix}${n}`);
    assert.ok(at("approval_requested") < at("approval_decided"), `${n}: requested, then decided`);
    assert.ok(at("approval_decided") < events.findIndex((e) => e.data.call_id === `${prefix}${n}` && ["tool_success", "tool_error"].includes(e.kind)), `${n}: decided, then its outcome`);
  }
  if (modelCalls !== undefined) assert.equal(kinds("model_usage").length, modelCalls, "a usage per model call");
  assert.ok(!JSON.stringify(events).includes(SECRET));
}

export const BUDGET = 6000;

/** The recommended compiler. */
export async function approvalCompiler() {
  const { ContextCompiler, Compactor, HistoryRecall, HistorySelector } = await import("agent-context-compiler");
  return new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity }), new Compactor(), new HistoryRecall()] });
}

/** The captured requests as JSON a child process prints. */
export const requestsJson = (requests) => requests.map(({ api, url, headers, body, bodyText }) => ({ api, url, headers, body, bodyText }));

/**
 * The release agent on the Agents SDK (OpenAIResponsesModel over `fetch`)
 * with agentsSession over `session` (synced to `store`).
 */
export async function agentsApproval({ session, store, fetch }) {
  const { Agent, OpenAIResponsesModel, setTracingDisabled, tool } = await import("@openai/agents");
  const { default: OpenAI } = await import("openai");
  const { agentsSession } = await import("agent-context-compiler/openai-agents");
  setTracingDisabled(true);
  const integration = agentsSession({ session, compiler: await approvalCompiler(), budget: BUDGET, store, lookBackTools: false });
  const tools = TOOL_SPECS.map((s) => tool({ name: s.name, description: s.description, parameters: s.parameters, strict: true, needsApproval: s.needsApproval === true, execute: async (args) => runTool(s.name, args) }));
  const agent = new Agent({ name: "release", instructions: SYSTEM, model: new OpenAIResponsesModel(new OpenAI({ apiKey: "test", fetch, maxRetries: 0 }), "gpt-4.1"), tools });
  return { agent, ...integration };
}

/**
 * The release assistant on the AI SDK: @ai-sdk/anthropic's model over
 * `fetch`, wrapped with contextMiddleware over `session` (synced to
 * `store`), and the tools (`needsApproval` where they wait).
 */
export async function aiSdkApproval({ session, store, fetch }) {
  const { jsonSchema, tool, wrapLanguageModel } = await import("ai");
  const { createAnthropic } = await import("@ai-sdk/anthropic");
  const { contextMiddleware } = await import("agent-context-compiler/ai-sdk");
  const model = wrapLanguageModel({ model: createAnthropic({ apiKey: "test", fetch })("claude-sonnet-4-5"), middleware: contextMiddleware({ session, compiler: await approvalCompiler(), budget: BUDGET, store, systemPrompt: SYSTEM }) });
  const tools = Object.fromEntries(TOOL_SPECS.map((s) => [s.name, tool({ description: s.description, inputSchema: jsonSchema(s.parameters), needsApproval: s.needsApproval === true, execute: async (args) => runTool(s.name, args) })]));
  return { model, tools };
}

/**
 * The release assistant on LangChain's createAgent: ChatOpenAI over
 * `fetch`, `checkpointer`, humanInTheLoopMiddleware on the tools that wait,
 * and contextMiddleware over the thread's session (`sessionOf(threadId)`,
 * synced to `store`).
 */
export async function langchainApproval({ sessionOf, store, fetch, checkpointer }) {
  const { createAgent, humanInTheLoopMiddleware, tool } = await import("langchain");
  const { ChatOpenAI } = await import("@langchain/openai");
  const { contextMiddleware } = await import("agent-context-compiler/langchain");
  const tools = TOOL_SPECS.map((s) => tool(async (args) => runTool(s.name, args), { name: s.name, description: s.description, schema: s.parameters }));
  const interruptOn = Object.fromEntries(TOOL_SPECS.map((s) => [s.name, s.needsApproval === true]));
  return createAgent({
    model: new ChatOpenAI({ model: "gpt-4.1", apiKey: "test", maxRetries: 0, configuration: { fetch } }), tools, systemPrompt: SYSTEM, checkpointer,
    middleware: [humanInTheLoopMiddleware({ interruptOn }), contextMiddleware({ session: sessionOf, compiler: await approvalCompiler(), budget: BUDGET, store, lookBackTools: false })],
  });
}

/**
 * The checks of a run paused and resumed in other processes: `runs` the
 * requests each process captured, in order; the session saved in `store`
 * under `sessionId` holds every event once with the decisions and nothing
 * pending. Reports (t.diagnostic) the events recorded and the o200k tokens
 * of the first model call after the first resume.
 */
export async function assertPausedAndResumed(t, { store, sessionId, runs, format, body, prefix = "call_", edited = true }) {
  const requests = runs.flat();
  assertRequests(requests, { format, body, prefix, edited });
  const saved = await store.loadSession(sessionId);
  try {
    assertEvents(saved.eventLog.events, { prefix, edited, modelCalls: requests.length });
    assert.deepEqual(saved.pendingApprovals(), []);
    t.diagnostic(`events: ${saved.eventLog.events.map((e) => e.kind).join(" ")}`);
    t.diagnostic(`first model call after a resume: ${bodyTokens(runs[1][0])} o200k tokens (the paused run's first call: ${bodyTokens(runs[0][0])})`);
  } finally {
    saved.free();
  }
}
