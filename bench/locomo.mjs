// Recall on real long conversations: LoCoMo's development half
// (../shared/testdata/locomo-dev, read in place, never copied), measured as
// its SOURCE.md says. Each conversation is recorded turn by turn (speaker A
// as the user, speaker B as the assistant, "<speaker>: <text>" with the
// shared image's caption and the session's date), compiled every 10 turns
// as a live loop would; then each question of categories 1-4 with evidence
// is recorded as the newest user message on a copy and compiled under the
// budget. An evidence turn is present when the first 80 characters of its
// text are in the request rendered for OpenAI. Beside the README's pipeline
// (HistorySelector -> Compactor -> HistoryRecall), with the same turns and
// counter: LangChain's trimMessages ("last") and a plain BM25 (minisearch)
// over every turn filling the whole budget; with the e5 fixture
// (e5-small/, ./e5.mjs) the pipeline with its embedder, and BM25 and e5
// fused by reciprocal rank filling the whole budget.
//
// Printed per budget and per category (with question counts): pooled
// evidence recall of each; questions where nothing was recalled and where
// no evidence reached the context; per conversation. Then the compile's p50
// with and without the embedder, the embedder's lookups (a miss fails the
// run) and a model embedding 13 texts a second on the longest conversation.
//
// Run alone: node bench/locomo.mjs [budgets, e.g. 4000,8000]
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { AIMessage, HumanMessage, SystemMessage, trimMessages } from "@langchain/core/messages";
import { Compactor, ContextCompiler, HistoryRecall, HistorySelector, Session } from "agent-context-compiler";
import { dot, e5Fixture } from "./e5.mjs";
import { OVERHEAD, askEach, askOnCopy, bm25Peer, count, fusedPeer } from "./peers.mjs";

const DATA = fileURLToPath(new URL("../../shared/testdata/locomo-dev/", import.meta.url));
const SYSTEM = "You are a long-term conversational companion. Answer from what was said in earlier conversations.";
const CATEGORIES = { 1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop" };

const collapse = (s) => s.replace(/\s+/g, " ");

/** A conversation's turns in order ({ role, text, id }) and its answerable questions. */
export function readConversation(path) {
  const c = JSON.parse(readFileSync(path, "utf8"));
  const turns = [];
  for (let n = 1; c[`session_${n}`]; n++) {
    const date = c[`session_${n}_date_time`];
    for (const t of c[`session_${n}`]) {
      const shares = t.blip_caption ? ` [shares ${t.blip_caption}]` : "";
      turns.push({ role: t.speaker === c.speaker_a ? "user" : "assistant", text: `${t.speaker}: ${t.text}${shares} (${date})`, id: t.dia_id });
    }
  }
  const byId = new Map(turns.map((t, i) => [t.id, i]));
  const questions = c.qa
    .filter((q) => q.category >= 1 && q.category <= 4)
    .map((q) => ({ text: q.question, category: q.category, evidence: (q.evidence ?? []).map((e) => byId.get(e)).filter((i) => i !== undefined) }))
    .filter((q) => q.evidence.length > 0);
  return { turns, questions };
}

/** Which of `evidence` (turn positions) appear in the rendered `request`. */
function present(turns, evidence, request) {
  const haystack = collapse(JSON.stringify(request));
  return evidence.map((i) => haystack.includes(JSON.stringify(collapse(turns[i].text).slice(0, 80)).slice(1, -1)));
}

const pipeline = (embedder) =>
  new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity }), new Compactor(), new HistoryRecall(embedder ? { embedder } : {})] });

async function ours(conv, budget, embedder) {
  const record = (session, t) => session.record(t.role === "user" ? "user_input" : "assistant_output", { content: t.text });
  // The live loop compiles without the embedder in both columns (the
  // fixture has no turn embedded as a query), so both ask from the same
  // session and the same usage reports.
  return askEach(pipeline(embedder), conv, budget, SYSTEM, record, (q, ctx) => {
    const request = ctx.toMessages({ format: "openai" });
    if (!JSON.stringify(request).includes(JSON.stringify(q.text).slice(1, -1))) throw new Error(`the question is missing: ${q.text}`);
    return { q, hits: present(conv.turns, q.evidence, request), recalled: ctx.recalled.length };
  }, pipeline());
}

async function trimmed(conv, budget) {
  const messages = [new SystemMessage(SYSTEM), ...conv.turns.map((t) => (t.role === "user" ? new HumanMessage(t.text) : new AIMessage(t.text)))];
  const tokenCounter = (msgs) => msgs.reduce((n, m) => n + count(String(m.content)) + OVERHEAD, 0);
  const out = [];
  for (const q of conv.questions) {
    const kept = await trimMessages([...messages, new HumanMessage(q.text)], { maxTokens: budget, strategy: "last", includeSystem: true, tokenCounter });
    out.push({ q, hits: present(conv.turns, q.evidence, kept.map((m) => ({ role: m.getType(), content: String(m.content) }))) });
  }
  return out;
}

function bm25(conv, budget) {
  const search = bm25Peer(conv.turns.map((t) => t.text), SYSTEM);
  return conv.questions.map((q) => ({ q, hits: present(conv.turns, q.evidence, search(q.text, budget).map((i) => ({ role: "user", content: conv.turns[i].text }))) }));
}

function fused(conv, budget, e5) {
  const search = fusedPeer(conv.turns.map((t) => t.text), SYSTEM, e5.vector, dot);
  return conv.questions.map((q) => ({ q, hits: present(conv.turns, q.evidence, search(q.text, budget).map((i) => ({ role: "user", content: conv.turns[i].text }))) }));
}

/** Pooled evidence recall of `results` (the share of all evidence turns present). */
const pooled = (results) => {
  const hits = results.flatMap((r) => r.hits);
  return hits.length === 0 ? NaN : hits.filter(Boolean).length / hits.length;
};

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor(s.length / 2)];
};
const cell = (x) => (Number.isNaN(x) ? "-" : x.toFixed(3));

/**
 * A model embedding 13 texts a second (the live e5 model on these machines)
 * behind the README's pipeline, on an imported session of the longest
 * conversation: its questions asked one after another, each compile waiting
 * the default 10 s. How many compiles recall lexically before the vectors
 * are there, and how many texts the embedder was asked for.
 */
async function slowModel(conv, e5, budget) {
  const base = new Session({ sessionId: "slow" });
  for (const t of conv.turns) base.record(t.role === "user" ? "user_input" : "assistant_output", { content: t.text });
  const exported = base.exportJson();
  base.free();
  const model = e5.slow(13);
  const compiler = pipeline(model.embed);
  let lexical = 0;
  let asked = 0;
  const started = performance.now();
  for (const q of conv.questions) {
    const { s, ctx, ms: waited } = await askOnCopy(compiler, exported, q.text, budget, SYSTEM);
    ctx.free();
    s.free();
    asked++;
    // A compile that waited the whole timeout recalled lexically.
    if (waited >= 9_900) lexical++;
    else break;
  }
  // What was still in flight settles before the next measurement.
  await sleep(100);
  return { turns: conv.turns.length, compiles: asked, lexical, ...model.stats, seconds: (performance.now() - started) / 1000 };
}

export async function locomoBench(budgets = [4_000, 8_000, 16_000]) {
  if (!existsSync(DATA)) {
    console.log(`\nLoCoMo recall: ${DATA} is not there (it sits beside the project as ../shared/testdata/locomo-dev); skipped\n`);
    return null;
  }
  const files = readdirSync(DATA).filter((n) => n.endsWith(".json")).sort();
  const convs = files.map((f) => ({ name: f.replace(".json", ""), ...readConversation(`${DATA}${f}`) }));
  const questions = convs.reduce((n, c) => n + c.questions.length, 0);
  const e5 = e5Fixture(`${DATA}e5-small/`);
  console.log(`\nLoCoMo recall (development half: conversations ${convs.map((c) => c.name).join(", ")}; ${convs.map((c) => c.turns.length).join("/")} turns; ${questions} questions of categories 1-4 with evidence)`);
  console.log("  pooled share of evidence turns in the request (same turns, same counter; every compile of ours within its budget in its count and in o200k, and holding the question)");
  if (!e5) console.log("  (the e5 fixture is not there: the columns with it are left out)");
  console.log("  budget   category       questions   README pipeline   + e5 embedder   BM25 + e5 fused, whole budget   BM25, whole budget   trimMessages (last)");
  const summary = {};
  const times = { ours: [], e5: [] };
  for (const budget of budgets) {
    const all = { ours: [], e5: [], fused: [], trim: [], bm25: [] };
    const perConversation = [];
    for (const conv of convs) {
      const mine = await ours(conv, budget);
      all.ours.push(...mine);
      if (e5) all.e5.push(...(await ours(conv, budget, e5.embed)));
      if (e5) all.fused.push(...fused(conv, budget, e5));
      all.trim.push(...(await trimmed(conv, budget)));
      all.bm25.push(...bm25(conv, budget));
      perConversation.push(`${conv.name} ${pooled(mine).toFixed(2)}${e5 ? ` / ${pooled(all.e5.slice(-mine.length)).toFixed(2)}` : ""}`);
    }
    times.ours.push(...all.ours.map((r) => r.ms));
    times.e5.push(...all.e5.map((r) => r.ms));
    const row = (label, of) =>
      `  ${String(budget).padStart(6)}   ${label.padEnd(14)} ${String(of(all.ours).length).padEnd(11)} ${cell(pooled(of(all.ours))).padEnd(17)} ${cell(pooled(of(all.e5))).padEnd(15)} ${cell(pooled(of(all.fused))).padEnd(31)} ${cell(pooled(of(all.bm25))).padEnd(20)} ${cell(pooled(of(all.trim)))}`;
    console.log(row("all", (xs) => xs));
    for (const [c, name] of Object.entries(CATEGORIES)) console.log(row(name, (xs) => xs.filter((r) => r.q.category === Number(c))));
    const none = all.ours.filter((r) => r.recalled === 0).length;
    const missing = all.ours.filter((r) => !r.hits.some(Boolean)).length;
    const noneE5 = all.e5.filter((r) => r.recalled === 0).length;
    const missingE5 = all.e5.filter((r) => !r.hits.some(Boolean)).length;
    console.log(`           nothing recalled: ${none}${e5 ? ` / ${noneE5} with e5` : ""}; no evidence in context: ${missing}${e5 ? ` / ${missingE5} with e5` : ""}`);
    console.log(`           by conversation (pipeline${e5 ? " / + e5" : ""}): ${perConversation.join(", ")}`);
    summary[budget] = pooled(all.ours);
    if (e5) summary[`${budget}e5`] = pooled(all.e5);
  }
  if (e5) {
    const p50 = { ours: median(times.ours), e5: median(times.e5) };
    console.log(`  compile p50 per question, every vector cached but the question's: ${p50.e5.toFixed(2)} ms with the e5 embedder, ${p50.ours.toFixed(2)} ms without: ${(p50.e5 / p50.ours).toFixed(2)}x (target <= 1.2x)`);
    console.log(`  embedder asked for ${e5.asked.query} questions as query and ${e5.asked.passage} turns as passage; fixture misses: ${e5.misses.length}`);
    const longest = convs.reduce((a, b) => (b.turns.length > a.turns.length ? b : a));
    const slow = await slowModel(longest, e5, budgets[0]);
    console.log(
      `  a model at 13 texts/s, conversation ${longest.name} imported (${slow.turns} turns), its questions asked one after another (timeout 10 s): ${slow.lexical} compiles recalled lexically before the vectors were there, the next by meaning; ${slow.passage} turns asked for as passages and ${slow.query} questions as queries, in ${slow.batches} batches (the session holds ${slow.turns} turns); ${slow.seconds.toFixed(0)} s`,
    );
    if (e5.misses.length > 0) throw new Error(`the e5 fixture has no vector for ${e5.misses.length} texts the embedder was asked for, e.g. ${e5.misses.slice(0, 3).join(" | ")}`);
    summary.slow = slow;
    summary.p50Ratio = p50.e5 / p50.ours;
  }
  console.log("");
  return summary;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await locomoBench(process.argv[2] ? process.argv[2].split(",").map(Number) : undefined);
}
