// What the recall benchmarks (./recall.mjs on generated conversations,
// ./locomo.mjs on LoCoMo) share: one token count for every strategy, and the
// plain-search peer.
import MiniSearch from "minisearch";
import { countTokens } from "agent-context-compiler";

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
