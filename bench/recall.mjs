// Recall on long conversations: the share of evidence turns whose text is in
// the messages the model gets, for each question of seeded conversations
// (bench/conversations.mjs), at budgets of 4k, 8k and 16k tokens, with the
// same turns and the same counter for every strategy:
//
// - this library: the README's recommended zoned pipeline
//   (HistorySelector({ keepFirst: 1, keepLast: Infinity }) -> ArtifactAttacher
//   -> Compactor), the conversation recorded turn by turn with a compile
//   every 10 turns as a live loop would, then each question recorded as the
//   newest user message (on a copy) and compiled;
// - LangChain's trimMessages (strategy "last") over the same messages;
// - plain BM25 (minisearch 7.2.0) ranking every turn by the question, the
//   best turns taken until the budget is full (given the whole budget, no
//   recent turns).
//
// Run alone: node bench/recall.mjs [conversations | search]
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, trimMessages } from "@langchain/core/messages";
import {
  ArtifactAttacher, Compactor, ContextCompiler, HistoryRecall, HistorySelector, MemoryArtifactStore, Session,
} from "agent-context-compiler";
import { conversation } from "./conversations.mjs";
import { OVERHEAD, askEach, bm25Peer, count } from "./peers.mjs";
import MiniSearch from "minisearch";
import { prose, rng } from "./trace.mjs";

const BUDGETS = [4_000, 8_000, 16_000];
const SYSTEM = "You are a helpful personal assistant. Answer from what the user told you.";


function record(session, turn, i) {
  if (turn.role === "tool") {
    const callId = `call_${i}`;
    session.record("tool_call", { call_id: callId, tool_name: turn.toolName, arguments: {} });
    session.record("tool_success", { call_id: callId, tool_name: turn.toolName, result: turn.content });
  } else {
    session.record(turn.role === "user" ? "user_input" : "assistant_output", { content: turn.content });
  }
}

function pipeline(store, recall) {
  const selector = new HistorySelector({ keepFirst: 1, keepLast: Infinity });
  return new ContextCompiler({
    layout: "zoned",
    processors: recall
      ? [selector, new ArtifactAttacher(store), new Compactor(), new HistoryRecall()]
      : [selector, new ArtifactAttacher(store), new Compactor()],
  });
}

/** The share of `evidence` turns whose text is in `contents`. */
function recalled(turns, evidence, contents) {
  const all = contents.join("\n\u0000\n");
  return evidence.filter((i) => all.includes(turns[i].content)).length / evidence.length;
}

async function ours(conv, budget, recall) {
  return askEach(pipeline(new MemoryArtifactStore(), recall), conv, budget, SYSTEM, record, (q, ctx) => {
    const contents = ctx.toMessages({ format: "openai" }).map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
    if (!contents.some((c) => c.includes(q.text))) throw new Error(`the newest user message is missing: ${q.text}`);
    return { kind: q.kind, recall: recalled(conv.turns, q.evidence, contents) };
  });
}

function toMessage(turn, i) {
  if (turn.role === "user") return new HumanMessage(turn.content);
  if (turn.role === "assistant") return new AIMessage(turn.content);
  return new ToolMessage({ content: turn.content, tool_call_id: `call_${i}` });
}

async function trimmed(conv, budget) {
  const messages = [new SystemMessage(SYSTEM), ...conv.turns.map(toMessage)];
  const tokenCounter = (msgs) => msgs.reduce((n, m) => n + count(String(m.content)) + OVERHEAD, 0);
  const scores = [];
  for (const q of conv.questions) {
    const kept = await trimMessages([...messages, new HumanMessage(q.text)], { maxTokens: budget, strategy: "last", includeSystem: true, tokenCounter });
    scores.push({ kind: q.kind, recall: recalled(conv.turns, q.evidence, kept.map((m) => String(m.content))) });
  }
  return scores;
}

function bm25(conv, budget) {
  const search = bm25Peer(conv.turns.map((t) => t.content), SYSTEM);
  return conv.questions.map((q) => ({ kind: q.kind, recall: recalled(conv.turns, q.evidence, search(q.text, budget).map((i) => conv.turns[i].content)) }));
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/** A Zipfian corpus: `size` made-up words (two to four syllables, each
 * distinct), the word of rank k drawn with probability proportional to 1/k,
 * as words fall in natural text. Gives `text(r, chars)`. */
export function zipfian(size = 20_000, seed = 7) {
  const r = rng(seed);
  const onsets = "b c d f g h j k l m n p r s t v w z br cr dr fl gr pl st tr".split(" ");
  const vowels = "a e i o u ai ea oo".split(" ");
  const seen = new Set();
  const words = [];
  while (words.length < size) {
    let w = "";
    for (let k = 2 + Math.floor(r() * 3); k > 0; k--) w += onsets[Math.floor(r() * onsets.length)] + vowels[Math.floor(r() * vowels.length)];
    if (!seen.has(w)) { seen.add(w); words.push(w); }
  }
  const cumulative = [];
  let total = 0;
  for (let k = 1; k <= size; k++) cumulative.push((total += 1 / k));
  const pick = (r) => {
    const x = r() * total;
    let lo = 0, hi = size - 1;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (cumulative[mid] < x) lo = mid + 1; else hi = mid; }
    return words[lo];
  };
  return (r, chars) => {
    let out = "";
    while (out.length < chars) out += pick(r) + (r() < 0.08 ? ". " : " ");
    return out.slice(0, chars);
  };
}

/** session.search at 10^4 and 10^5 events on two corpora: the Zipfian one
 * (20,000 words, as natural text spreads them) and the bench's 59 words
 * (where every posting list holds nearly every event). What indexing adds
 * to recording (the index is brought up to date by the first search or
 * compile, so recording itself costs nothing more: the figure is record +
 * catch-up over record), and the p50 of later searches (5 words drawn from
 * the corpus); beside them minisearch 7.2 (BM25 in JavaScript) indexing the
 * same texts and answering the same queries. */
export function searchBench(sizes = [10_000, 100_000]) {
  console.log("\nsession.search: recording N events of 200-1,200 characters, the index caught up by the first search, then 50 searches of 5 words; minisearch on the same texts and queries");
  console.log("  corpus              events    record (ms)   first search, catching up (ms)   record + index / record   search p50 / p95 (ms)   minisearch index (ms)   minisearch p50 / p95 (ms)");
  const corpora = [["Zipfian, 20k words", zipfian()], ["59 words", prose]];
  const p50p95 = (times) => {
    times.sort((a, b) => a - b);
    return `${times[25].toFixed(2)} / ${times[47].toFixed(2)}`;
  };
  for (const [name, text] of corpora) {
    for (const n of sizes) {
      const r = rng(n);
      const texts = Array.from({ length: n }, () => text(r, 200 + Math.floor(r() * 1000)));
      const queries = Array.from({ length: 50 }, () => text(r, 200).split(/[ .]+/).filter(Boolean).slice(0, 5).join(" "));
      const s = new Session({ sessionId: "search" });
      let start = performance.now();
      for (let i = 0; i < n; i++) s.record(i % 2 ? "assistant_output" : "user_input", { content: texts[i] });
      const recording = performance.now() - start;
      start = performance.now();
      s.search(text(r, 40), { limit: 10 });
      const catchUp = performance.now() - start;
      const ours = queries.map((query) => {
        const t = performance.now();
        s.search(query, { limit: 10 });
        return performance.now() - t;
      });
      s.free();
      start = performance.now();
      const peer = new MiniSearch({ fields: ["text"], storeFields: [] });
      peer.addAll(texts.map((t, id) => ({ id, text: t })));
      const peerIndex = performance.now() - start;
      const theirs = queries.map((query) => {
        const t = performance.now();
        peer.search(query).slice(0, 10);
        return performance.now() - t;
      });
      console.log(`  ${name.padEnd(18)} ${n.toLocaleString("en").padStart(7)}   ${recording.toFixed(0).padStart(11)}   ${catchUp.toFixed(0).padStart(31)}   ${((recording + catchUp) / recording).toFixed(2).padStart(23)}   ${p50p95(ours).padStart(21)}   ${peerIndex.toFixed(0).padStart(21)}   ${p50p95(theirs).padStart(25)}`);
    }
  }
}

export async function recallBench(conversations = 10) {
  const convs = Array.from({ length: conversations }, (_, i) => conversation(1000 + i));
  const turns = convs.map((c) => c.turns.length);
  const tokens = convs.map((c) => c.turns.reduce((n, t) => n + count(t.content) + OVERHEAD, 0));
  const questions = convs.reduce((n, c) => n + c.questions.length, 0);
  console.log(`recall on long conversations: ${conversations} seeded conversations of ${Math.min(...turns)}-${Math.max(...turns)} turns (${Math.min(...tokens).toLocaleString("en")}-${Math.max(...tokens).toLocaleString("en")} tokens), ${questions} questions (direct, paraphrased, temporal, multi-hop)`);
  console.log("  share of evidence turns in the messages sent (same turns, same counter; every compile checked within its budget and holding the question)");
  console.log("  budget   this library (pipeline today)   with HistoryRecall   trimMessages (last)   plain BM25, whole budget (minisearch)");
  for (const budget of BUDGETS) {
    const all = { ours: [], recall: [], trim: [], bm25: [] };
    for (const conv of convs) {
      all.ours.push(...(await ours(conv, budget, false)));
      all.recall.push(...(await ours(conv, budget, true)));
      all.trim.push(...(await trimmed(conv, budget)));
      all.bm25.push(...bm25(conv, budget));
    }
    const m = (xs) => mean(xs.map((x) => x.recall)).toFixed(2);
    console.log(`  ${String(budget).padStart(6)}   ${m(all.ours).padEnd(31)} ${m(all.recall).padEnd(20)} ${m(all.trim).padEnd(21)} ${m(all.bm25)}`);
    const kinds = [...new Set(all.recall.map((x) => x.kind))];
    console.log(`           with HistoryRecall by kind: ${kinds.map((k) => `${k} ${m(all.recall.filter((x) => x.kind === k))}`).join(", ")}`);
  }
  console.log("");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv[2] === "search") searchBench();
  else {
    await recallBench(Number(process.argv[2] ?? 10));
    searchBench();
  }
}
