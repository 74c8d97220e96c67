// The integrations side by side (issue 61's closing table): the 30-turn
// coding loop of tests/js/coding_loop.mjs (three tools whose outputs are 5
// to 40 KB; turn 2 states a fact turn 30 asks about; turn 3's output holds
// a secret) run through each framework's own provider code over the
// scripted fetch of tests/js/wire, which plays the provider's HTTP API and
// captures every request body. Each framework runs plain (its own history,
// whole) and with this library; LangChain also with its own
// summarizationMiddleware and contextEditingMiddleware.
//
// Printed per configuration, from the captured bodies (o200k tokens of what
// each body sends: system, messages, tools): requests made, tokens per
// request (max, p50), requests over the budget, requests with a call
// without its result or a result without its call, the outputs that fit
// the budget seen whole by the request after the call, the outputs too big
// read whole (at once or in pages), whether the turn-30 request holds turn
// 2's fact, the bodies holding the secret, for this library's rows whether
// every step was recorded exactly once in the session, and the wall time.
//
//   node bench/integrations.mjs
import OpenAI from "openai";
import { generateText, isStepCount, jsonSchema, tool as aiTool, wrapLanguageModel } from "ai";
import { createOpenAI } from "@ai-sdk/openai";
import { ClearToolUsesEdit, contextEditingMiddleware, createAgent, summarizationMiddleware, tool as lcTool } from "langchain";
import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { ScriptedSummarizer } from "./summarizer.mjs";
import { ChatOpenAI } from "@langchain/openai";
import { Agent, MemorySession, OpenAIResponsesModel, run, setTracingDisabled, tool as agentsTool } from "@openai/agents";
import { contextMiddleware as aiSdkMiddleware, lookBackTools } from "agent-context-compiler/ai-sdk";
import { contextMiddleware as langchainMiddleware } from "agent-context-compiler/langchain";
import { agentsSession } from "agent-context-compiler/openai-agents";
import { counted, scriptedApi, toolCallsIn, toolResultsIn } from "../tests/js/wire/index.mjs";
import { BUDGET, FIXED, SECRET, SYSTEM, TOOL_SPECS, TURNS, codingModel, outcome, recommended, runTool, turnPlan } from "../tests/js/coding_loop.mjs";

setTracingDisabled(true);

const fits = (tokens) => tokens + FIXED <= BUDGET;

// ------------------------------------------------------------------ AI SDK

const aiSdkTools = Object.fromEntries(TOOL_SPECS.map((s) => [s.name, aiTool({ description: s.description, inputSchema: jsonSchema(s.parameters), execute: async (args) => runTool(s.name, args) })]));

async function aiSdk(ours) {
  const { reply, measured } = codingModel({ idPrefix: "call_" });
  const api = scriptedApi({ reply });
  const provider = createOpenAI({ apiKey: "test", fetch: api.fetch })("gpt-4.1");
  let model = provider;
  let tools = aiSdkTools;
  let session = null;
  if (ours) {
    const r = await recommended("bench-ai-sdk");
    session = r.session;
    model = wrapLanguageModel({ model: provider, middleware: aiSdkMiddleware({ session, compiler: r.compiler, budget: BUDGET, systemPrompt: SYSTEM }) });
    tools = { ...aiSdkTools, ...lookBackTools({ session, artifactStore: r.store }) };
  }
  const messages = [];
  for (let t = 1; t <= TURNS; t++) {
    messages.push({ role: "user", content: turnPlan(t).question });
    const result = await generateText({ model, messages, tools, ...(ours ? {} : { system: SYSTEM }), stopWhen: isStepCount(12), maxRetries: 0 });
    messages.push(...result.responseMessages);
  }
  return { api, measured, session };
}

// ---------------------------------------------------------------- LangChain

const langchainTools = TOOL_SPECS.map((s) => lcTool(async (args) => runTool(s.name, args), { name: s.name, description: s.description, schema: s.parameters }));

async function langchain(kind) {
  const { reply, measured } = codingModel({ idPrefix: "call_" });
  const api = scriptedApi({ reply });
  let session = null;
  let middleware = [];
  if (kind === "summarization") middleware = [summarizationMiddleware({ model: new ScriptedSummarizer(/Turn \\d+:|ERROR|staging database/), trigger: { tokens: BUDGET }, keep: { messages: 20 } })];
  if (kind === "editing") middleware = [contextEditingMiddleware({ edits: [new ClearToolUsesEdit({ trigger: { tokens: BUDGET }, keep: { messages: 3 } })] })];
  if (kind === "ours") {
    const r = await recommended("bench-langchain");
    session = r.session;
    middleware = [langchainMiddleware({ session, compiler: r.compiler, budget: BUDGET, artifactStore: r.store })];
  }
  const agent = createAgent({
    model: new ChatOpenAI({ model: "gpt-4.1", apiKey: "test", maxRetries: 0, configuration: { fetch: api.fetch } }),
    tools: langchainTools, systemPrompt: SYSTEM, checkpointer: new MemorySaver(), middleware,
  });
  const config = { configurable: { thread_id: "coding" }, recursionLimit: 100 };
  for (let t = 1; t <= TURNS; t++) await agent.invoke({ messages: [new HumanMessage(turnPlan(t).question)] }, config);
  return { api, measured, session };
}

// --------------------------------------------------------------- Agents SDK

const agentsTools = TOOL_SPECS.map((s) => agentsTool({ name: s.name, description: s.description, parameters: s.parameters, strict: true, execute: async (args) => runTool(s.name, args) }));

async function agents(ours) {
  const { reply, measured } = codingModel({ idPrefix: "call_" });
  const api = scriptedApi({ reply });
  const model = new OpenAIResponsesModel(new OpenAI({ apiKey: "test", fetch: api.fetch, maxRetries: 0 }), "gpt-4.1");
  let session = null;
  let options = { session: new MemorySession() };
  let tools = agentsTools;
  if (ours) {
    const r = await recommended("bench-agents");
    session = r.session;
    const a = agentsSession({ session, compiler: r.compiler, budget: BUDGET, artifactStore: r.store });
    options = { session: a.session, callModelInputFilter: a.callModelInputFilter };
    tools = [...agentsTools, ...a.tools];
  }
  const agent = new Agent({ name: "coder", instructions: SYSTEM, model, tools });
  for (let t = 1; t <= TURNS; t++) await run(agent, turnPlan(t).question, { ...options, maxTurns: 20 });
  return { api, measured, session };
}

// ------------------------------------------------------------------ figures

const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const n = (x) => x.toLocaleString("en");

/** Whether the session recorded every step once: a call per call made, one outcome each in order, TURNS user inputs. */
function eventsOnce(session, requests) {
  const events = session.eventLog.events;
  const calls = events.filter((e) => e.kind === "tool_call");
  const outcomes = events.filter((e) => ["tool_success", "tool_error"].includes(e.kind));
  const inputs = events.filter((e) => e.kind === "user_input").length;
  const problems = [];
  if (calls.length !== requests - TURNS) problems.push(`${calls.length} calls for ${requests - TURNS}`);
  if (JSON.stringify(outcomes.map((e) => e.data.call_id)) !== JSON.stringify(calls.map((e) => e.data.call_id))) problems.push(`${outcomes.length} outcomes for ${calls.length} calls`);
  if (inputs !== TURNS) problems.push(`${inputs} user inputs`);
  if (session.exportJson().includes(SECRET)) problems.push("secret in the session");
  return problems.length ? `no: ${problems.join(", ")}` : "yes";
}

function figures({ api, measured, session }) {
  const requests = api.requests;
  const totals = requests.map((r) => counted(r).total);
  const unpaired = requests.filter((r) => {
    const calls = toolCallsIn(r).map((c) => c.id);
    const results = toolResultsIn(r).map((c) => c.id);
    return calls.some((c) => !results.includes(c)) || results.some((c) => !calls.includes(c));
  }).length;
  const o = outcome(measured, { fits });
  const turns = Object.keys(measured.outputs).map(Number);
  const big = turns.filter((t) => !fits(measured.outputs[t].tokens));
  const atOnce = big.filter((t) => measured.outputs[t].seen >= 0.95).length;
  const bigWhole = atOnce + o.pagedWhole;
  const how = bigWhole === 0 ? "" : o.pagedWhole === 0 ? " at once" : atOnce === 0 ? " in pages" : `: ${o.pagedWhole} paged, ${atOnce} at once`;
  return {
    requests: requests.length,
    max: Math.max(...totals),
    p50: p50(totals),
    over: totals.filter((t) => t > BUDGET).length,
    unpaired,
    seen: `${o.seenWhole}/${o.fitting}`,
    big: `${bigWhole}/${big.length}${how}`,
    fact: o.factRecalled === null ? "not asked" : o.factRecalled ? "yes" : "no",
    secrets: requests.filter((r) => r.bodyText.includes(SECRET)).length,
    once: session === null ? "—" : eventsOnce(session, requests.length),
  };
}

const CONFIGURATIONS = [
  ["AI SDK, plain (the app's messages, whole)", () => aiSdk(false)],
  ["AI SDK + contextMiddleware, lookBackTools", () => aiSdk(true)],
  ["LangChain createAgent, plain (MemorySaver)", () => langchain("plain")],
  ["LangChain + summarizationMiddleware", () => langchain("summarization")],
  ["LangChain + contextEditingMiddleware", () => langchain("editing")],
  ["LangChain + contextMiddleware", () => langchain("ours")],
  ["Agents SDK, plain (MemorySession)", () => agents(false)],
  ["Agents SDK + agentsSession", () => agents(true)],
];

export async function integrationsBench() {
  console.log(
    `\nThe integrations through each framework's provider code: the ${TURNS}-turn coding loop (tools returning 5-40 KB, a fact at turn 2 asked at turn 30, a secret in turn 3's output) over a scripted fetch; ` +
      `AI SDK and Agents SDK on the Responses API, LangChain on Chat Completions; budget ${n(BUDGET)}; o200k tokens of each captured HTTP body`,
  );
  const head = ["configuration", "requests", "tokens max", "p50", "over budget", "unpaired", "fitting seen whole", "too big read whole", "fact at 30", "secret in", "events once", "wall"];
  const widths = [44, 8, 10, 7, 11, 8, 18, 24, 10, 9, 11, 7];
  const line = (cells) => `  ${cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join("  ")}`;
  console.log(line(head));
  for (const [name, loop] of CONFIGURATIONS) {
    const t0 = performance.now();
    let result;
    try {
      result = await loop();
    } catch (e) {
      console.log(`  ${name.padEnd(widths[0])}  error: ${String(e?.message ?? e).split("\n")[0].slice(0, 200)}`);
      continue;
    }
    const wall = `${((performance.now() - t0) / 1000).toFixed(1)} s`;
    try {
      const f = figures(result);
      console.log(line([name, f.requests, n(f.max), n(f.p50), f.over, f.unpaired, f.seen, f.big, f.fact, f.secrets, f.once, wall]));
    } catch (e) {
      console.log(`  ${name.padEnd(widths[0])}  error measuring: ${String(e?.message ?? e).split("\n")[0].slice(0, 200)}`);
    } finally {
      result.session?.free();
    }
  }
  console.log(
    "  (the plain rows send the whole history: every output seen and the fact kept, but requests up to 21 times the budget with the secret in every body after turn 3's call; " +
      "LangChain's middlewares trigger on their own estimate and keep whole turns, so most requests stay over the budget, and the summariser, shown only a trimmed tail, drops the fact; " +
      "this library's rows stay within the budget, see every output that fits whole, read the others in pages (more requests), keep the fact and send no secret)",
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await integrationsBench();
