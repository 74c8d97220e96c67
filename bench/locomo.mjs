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
// over every turn filling the whole budget.
//
// Printed: pooled evidence recall per budget, per category (with question
// counts) and per conversation, and two counts: questions where nothing was
// recalled, and questions where no evidence reached the context.
//
// Run alone: node bench/locomo.mjs [budgets, e.g. 4000,8000]
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { AIMessage, HumanMessage, SystemMessage, trimMessages } from "@langchain/core/messages";
import { Compactor, ContextCompiler, HistoryRecall, HistorySelector } from "agent-context-compiler";
import { OVERHEAD, askEach, bm25Peer, count } from "./peers.mjs";

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

/** An embedder looking each text up in the e5 fixture (../shared/testdata/locomo-dev/e5-small), as
 * `passage` (the embedder is not told which text is the question); `misses` lists texts not there. */
export function e5Embedder() {
  const dir = `${DATA}e5-small/`;
  if (!existsSync(`${dir}keys.json`)) return null;
  const { items } = JSON.parse(readFileSync(`${dir}keys.json`, "utf8"));
  const bytes = readFileSync(`${dir}vectors.f32`);
  const all = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const dim = all.length / items.length;
  const rows = new Map(items.map(([kind, text], i) => [`${kind}\u0000${text}`, i]));
  const misses = [];
  const embed = async (texts) =>
    texts.map((t) => {
      const i = rows.get(`${process.env.E5_QUERY && rows.has(`query\u0000${t}`) ? "query" : "passage"}\u0000${t}`);
      if (i === undefined) {
        misses.push(t);
        return new Float32Array(dim);
      }
      return all.subarray(i * dim, (i + 1) * dim);
    });
  return { embed, misses };
}

async function ours(conv, budget, embedder) {
  const record = (session, t) => session.record(t.role === "user" ? "user_input" : "assistant_output", { content: t.text });
  return askEach(pipeline(embedder), conv, budget, SYSTEM, record, (q, ctx) => {
    const request = ctx.toMessages({ format: "openai" });
    if (!JSON.stringify(request).includes(JSON.stringify(q.text).slice(1, -1))) throw new Error(`the question is missing: ${q.text}`);
    return { q, hits: present(conv.turns, q.evidence, request), recalled: ctx.recalled.length };
  });
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

/** Pooled evidence recall of `results` (the share of all evidence turns present). */
const pooled = (results) => {
  const hits = results.flatMap((r) => r.hits);
  return hits.length === 0 ? NaN : hits.filter(Boolean).length / hits.length;
};

export async function locomoBench(budgets = [4_000, 8_000, 16_000]) {
  if (!existsSync(DATA)) {
    console.log(`\nLoCoMo recall: ${DATA} is not there (it sits beside the project as ../shared/testdata/locomo-dev); skipped\n`);
    return null;
  }
  const files = readdirSync(DATA).filter((n) => n.endsWith(".json")).sort();
  const convs = files.map((f) => ({ name: f.replace(".json", ""), ...readConversation(`${DATA}${f}`) }));
  const questions = convs.reduce((n, c) => n + c.questions.length, 0);
  console.log(`\nLoCoMo recall (development half: conversations ${convs.map((c) => c.name).join(", ")}; ${convs.map((c) => c.turns.length).join("/")} turns; ${questions} questions of categories 1-4 with evidence)`);
  console.log("  pooled share of evidence turns in the request (same turns, same counter; every compile within its budget and holding the question)");
  console.log("  budget   this library (README pipeline)   trimMessages (last)   BM25 over all turns, whole budget   nothing recalled   no evidence in context");
  const summary = {};
  const e5 = e5Embedder();
  for (const budget of budgets) {
    const all = { ours: [], e5: [], trim: [], bm25: [] };
    const perConversation = [];
    for (const conv of convs) {
      const mine = await ours(conv, budget);
      all.ours.push(...mine);
      if (e5) all.e5.push(...(await ours(conv, budget, e5.embed)));
      all.trim.push(...(await trimmed(conv, budget)));
      all.bm25.push(...bm25(conv, budget));
      perConversation.push(`${conv.name} ${pooled(mine).toFixed(2)}`);
    }
    const none = all.ours.filter((r) => r.recalled === 0).length;
    const missing = all.ours.filter((r) => !r.hits.some(Boolean)).length;
    console.log(`  ${String(budget).padStart(6)}   ${pooled(all.ours).toFixed(3).padEnd(32)} ${pooled(all.trim).toFixed(3).padEnd(21)} ${pooled(all.bm25).toFixed(3).padEnd(35)} ${String(none).padEnd(18)} ${missing}`);
    const byCategory = Object.entries(CATEGORIES).map(([c, name]) => {
      const of = (xs) => xs.filter((r) => r.q.category === Number(c));
      return `${name} ${pooled(of(all.ours)).toFixed(2)} / ${pooled(of(all.trim)).toFixed(2)} / ${pooled(of(all.bm25)).toFixed(2)} (${of(all.ours).length} q)`;
    });
    console.log(`           by category (ours / trimMessages / BM25): ${byCategory.join(", ")}`);
    console.log(`           by conversation (ours): ${perConversation.join(", ")}`);
    if (e5) {
      const byCat = Object.entries(CATEGORIES).map(([c, name]) => `${name} ${pooled(all.e5.filter((r) => r.q.category === Number(c))).toFixed(2)}`);
      console.log(`           with the e5 embedder: ${pooled(all.e5).toFixed(3)} (${byCat.join(", ")}); fixture misses ${e5.misses.length}`);
    }
    summary[budget] = pooled(all.ours);
  }
  console.log("");
  return summary;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await locomoBench(process.argv[2] ? process.argv[2].split(",").map(Number) : undefined);
}
