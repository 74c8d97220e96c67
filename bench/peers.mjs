// What the recall benchmarks (./recall.mjs on generated conversations,
// ./locomo.mjs on LoCoMo) share: one token count for every strategy, the
// plain-search peer, and how our pipeline is asked each question.
import MiniSearch from "minisearch";
import { countTokens as o200k } from "gpt-tokenizer/encoding/o200k_base";
import { Session, countTokens } from "agent-context-compiler";

/** Tokens a message costs beyond its text, for the peers. */
export const OVERHEAD = 3;

const cache = new Map();
/** This library's count of `s`, cached (texts repeat across budgets and questions). */
export function count(s) {
  let n = cache.get(s);
  if (n === undefined) cache.set(s, (n = countTokens(s)));
  return n;
}

/**
 * Plain BM25 (minisearch) over `texts`, given the whole budget: for a
 * question, the positions of the texts it ranks first, as many as fit
 * `budget` beside `system` and the question (no recent turns).
 */
export function bm25Peer(texts, system) {
  const index = new MiniSearch({ fields: ["text"], storeFields: [] });
  index.addAll(texts.map((text, id) => ({ id, text })));
  return (question, budget) => {
    let used = count(system) + OVERHEAD + count(question) + OVERHEAD;
    const picked = [];
    for (const hit of index.search(question)) {
      const cost = count(texts[hit.id]) + OVERHEAD;
      if (used + cost > budget) continue;
      used += cost;
      picked.push(hit.id);
    }
    return picked;
  };
}

/**
 * Plain BM25 and an embedder's cosine ranking fused by reciprocal rank
 * (k = 60, the usual constant), given the whole budget: `vectorOf(text,
 * role)` is the embedding of a turn (`passage`) or the question (`query`).
 */
export function fusedPeer(texts, system, vectorOf, cosine) {
  const index = new MiniSearch({ fields: ["text"], storeFields: [] });
  index.addAll(texts.map((text, id) => ({ id, text })));
  const passages = texts.map((t) => vectorOf(t, "passage"));
  return (question, budget) => {
    const q = vectorOf(question, "query");
    const fused = new Map();
    const add = (ids) => ids.forEach((id, rank) => fused.set(id, (fused.get(id) ?? 0) + 1 / (60 + rank + 1)));
    add(index.search(question).map((h) => h.id));
    add(passages.map((v, id) => [id, cosine(q, v)]).sort((a, b) => b[1] - a[1]).map(([id]) => id));
    let used = count(system) + OVERHEAD + count(question) + OVERHEAD;
    const picked = [];
    for (const [id] of [...fused].sort((a, b) => b[1] - a[1])) {
      const cost = count(texts[id]) + OVERHEAD;
      if (used + cost > budget) continue;
      used += cost;
      picked.push(id);
    }
    return picked;
  };
}

/**
 * What a provider reports as the input tokens of a Chat Completions request:
 * o200k tokens of each message's content, 3 per message and 3 to prime the
 * reply (OpenAI's count for its chat format).
 */
export function providerTokens(messages) {
  return messages.reduce((n, m) => n + o200k(typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? m)) + 3, 3);
}

/**
 * `text` recorded as the newest user message on a copy of the session
 * `exported`, compiled under `budget`: the copy, its context and the
 * compile's milliseconds (the caller frees the first two).
 */
export async function askOnCopy(compiler, exported, text, budget, system) {
  const s = Session.importJson(exported);
  s.record("user_input", { content: text });
  const started = performance.now();
  try {
    const ctx = await compiler.compile(s, budget, { systemPrompt: system });
    return { s, ctx, ms: performance.now() - started };
  } catch (e) {
    s.free();
    throw e;
  }
}

/**
 * Our pipeline as a live loop runs it, as the README's quick start does:
 * each turn recorded (`record(session, turn, i)`) with a compile every 10
 * turns whose request's provider count (`providerTokens`) is recorded as the
 * reply's usage, then each question recorded as the newest user message on a
 * copy of the session and compiled under `budget` (checked within it in the
 * session's count and in o200k). `measure(q, ctx)` reads each question's
 * context; the list of what it gives is returned, each with the compile's
 * milliseconds (`ms`). `live` compiles the loop (default: `compiler`).
 */
export async function askEach(compiler, conv, budget, system, record, measure, live = compiler) {
  const base = new Session({ sessionId: "conversation" });
  for (const [i, turn] of conv.turns.entries()) {
    record(base, turn, i);
    if (i % 10 === 9) {
      const ctx = await live.compile(base, budget, { systemPrompt: system });
      base.recordUsage({ inputTokens: providerTokens(ctx.toMessages({ format: "openai" })), outputTokens: 0 });
      ctx.free();
    }
  }
  const exported = base.exportJson();
  base.free();
  const out = [];
  for (const q of conv.questions) {
    const { s, ctx, ms } = await askOnCopy(compiler, exported, q.text, budget, system);
    try {
      if (ctx.tokenCount > budget) throw new Error(`over budget: ${ctx.tokenCount} > ${budget}`);
      const sent = providerTokens(ctx.toMessages({ format: "openai" }));
      if (sent > budget) throw new Error(`over budget in o200k: ${sent} > ${budget}`);
      out.push({ ...measure(q, ctx), ms });
    } finally {
      ctx.free();
      s.free();
    }
  }
  return out;
}
