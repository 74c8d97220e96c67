// LangChain createAgent (langchain 1.x) on one tool loop, with each way of
// keeping its context in bounds: no middleware (the whole thread), LangChain's
// own summarizationMiddleware (a deterministic scripted summariser keeping
// every question and every ERROR line) and contextEditingMiddleware
// (ClearToolUsesEdit), and this library's contextMiddleware (the
// recommended pipeline, HistorySelector -> Compactor -> HistoryRecall).
//
// The loop: 60 turns, each reading its turn's 60-line log through the
// `read_log` tool (about 1,300 tokens) and answering; turn 1's log alone
// names volume vol-7781 over quota, and every tenth turn from turn 20 asks
// about it. The budget (and both LangChain triggers) is 8,000 tokens.
//
// Printed per configuration, counted with o200k (gpt-tokenizer) on what the
// model was given: tokens sent per call (mean and max), calls over the
// budget, prefix reuse (the share of each call's serialised messages equal
// to the previous call's prefix, what a provider's prompt cache can reuse),
// and evidence kept (the asking turns whose model input still names
// vol-7781).
import { contextEditingMiddleware, ClearToolUsesEdit, createAgent, summarizationMiddleware } from "langchain";
import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { ScriptedSummarizer, text } from "./summarizer.mjs";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { contextMiddleware } from "agent-context-compiler/langchain";
import { Compactor, ContextCompiler, HistoryRecall, HistorySelector, Session } from "agent-context-compiler";
import { ScriptedChatModel, readLog } from "../tests/js/langchain_loop.mjs";

const TURNS = 60;
const BUDGET = 8000;
const EVIDENCE = "vol-7781";

/** One line per message: its type, text and calls, as a provider would get them in order. */
const serialise = (messages) => messages.map((m) => JSON.stringify([m.getType(), text(m), m.tool_calls ?? [], m.tool_call_id ?? null])).join("\n");

function commonPrefix(a, b) {
  let i = 0;
  const n = Math.min(a.length, b.length);
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

async function loop(name, middleware) {
  const calls = [];
  const agent = createAgent({ model: new ScriptedChatModel(calls), tools: [readLog], systemPrompt: "You are an SRE on call for the nightly job.", checkpointer: new MemorySaver(), middleware });
  const config = { configurable: { thread_id: "bench" }, recursionLimit: 50 };
  const asking = [];
  for (let turn = 1; turn <= TURNS; turn++) {
    const question = turn >= 20 && turn % 10 === 0 ? `Turn ${turn}: which volume was over quota in the first turn?` : `Turn ${turn}: what did the nightly job log?`;
    if (question.includes("over quota")) asking.push(calls.length + 1);
    await agent.invoke({ messages: [new HumanMessage(question)] }, config);
  }
  const sent = calls.map((c) => serialise(c));
  const tokens = sent.map((s) => countTokens(s));
  let reuse = 0;
  for (let i = 1; i < sent.length; i++) reuse += commonPrefix(sent[i], sent[i - 1]) / sent[i].length;
  // The turn's answering call (its second) holds what the model answered from.
  const kept = asking.filter((i) => sent[i]?.includes(EVIDENCE)).length;
  return {
    name,
    mean: tokens.reduce((a, b) => a + b, 0) / tokens.length,
    max: Math.max(...tokens),
    over: tokens.filter((t) => t > BUDGET).length,
    reuse: reuse / (sent.length - 1),
    evidence: `${kept}/${asking.length}`,
    calls: calls.length,
  };
}

export async function langchainMiddlewareBench() {
  const session = new Session({ sessionId: "bench" });
  const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity }), new Compactor(), new HistoryRecall()] });
  const rows = [
    await loop("no middleware (the whole thread)", []),
    await loop("summarizationMiddleware (scripted summariser)", [summarizationMiddleware({ model: new ScriptedSummarizer(/Turn \\d+:|ERROR/), trigger: { tokens: BUDGET }, keep: { messages: 20 } })]),
    await loop("contextEditingMiddleware (ClearToolUsesEdit)", [contextEditingMiddleware({ edits: [new ClearToolUsesEdit({ trigger: { tokens: BUDGET }, keep: { messages: 3 } })] })]),
    await loop("this library's contextMiddleware", [contextMiddleware({ session, compiler, budget: BUDGET })]),
  ];
  session.free();
  console.log(`\nLangChain createAgent, ${TURNS}-turn tool loop, ${BUDGET.toLocaleString("en")}-token budget (o200k tokens of what the model got)`);
  console.log("  configuration                                    tokens/call mean   max      over budget   prefix reuse   evidence kept");
  for (const r of rows) {
    console.log(`  ${r.name.padEnd(48)} ${Math.round(r.mean).toLocaleString("en").padStart(16)}   ${r.max.toLocaleString("en").padStart(6)}   ${String(r.over).padStart(11)}   ${r.reuse.toFixed(2).padStart(12)}   ${r.evidence.padStart(13)}`);
  }
  const ours = rows.at(-1);
  for (const peer of rows.slice(1, 3)) {
    console.log(`  ratio tokens/call (ours / ${peer.name.split(" ")[0]}): ${(ours.mean / peer.mean).toFixed(2)}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await langchainMiddlewareBench();
