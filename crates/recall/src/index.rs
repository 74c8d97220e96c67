//! An inverted index ranked with Okapi BM25, built incrementally: a text
//! added is indexed once, in time proportional to its length, and a search
//! touches only the postings of its terms.

use std::collections::{HashMap, HashSet};

use crate::stats;
use crate::terms::Terms;

/// BM25's term-frequency saturation.
const K1: f64 = 1.2;
/// BM25's length normalisation.
const B: f64 = 0.75;

/// The distinction of a match when nearly every key scores the same.
pub const MAX_DISTINCTION: f64 = 100.0;

/// One indexed text: where it came from and how many terms it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Doc {
    /// The caller's key of the text (a session event's position).
    key: usize,
    /// Terms in the text.
    length: u32,
}

/// One search result: the key of the text and its BM25 score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// The key the text was added under.
    pub key: usize,
    /// Its BM25 score (higher is more relevant; always above 0).
    pub score: f64,
    /// The score over the most any text could score for the query's terms
    /// that the index holds (each term's weight at saturation): 0 to 1,
    /// comparable across queries.
    pub relevance: f64,
    /// How far the score stands out from the scores of every text matching
    /// any of the query's terms: standard deviations above their mean (0
    /// when it does not stand out, or fewer than two texts match).
    pub distinction: f64,
}

/// The index: postings per term, lengths per text.
#[derive(Debug, Default)]
pub struct RecallIndex {
    terms: Terms,
    /// Each term's id: its place in `postings`.
    vocabulary: HashMap<String, u32>,
    /// Per term id, the texts holding it and how often, in the order added.
    postings: Vec<Vec<(u32, u32)>>,
    docs: Vec<Doc>,
    total_length: u64,
    /// Distinct keys indexed.
    keys: HashSet<usize>,
}

impl RecallIndex {
    /// An empty index.
    pub fn new() -> Self {
        RecallIndex::default()
    }

    /// Texts indexed.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether nothing was indexed.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Indexes `text` under `key` (several texts may share a key, added at
    /// any time: the chunks of one long output, an event's text and the
    /// output it stored).
    pub fn add(&mut self, key: usize, text: &str) {
        let Ok(doc) = u32::try_from(self.docs.len()) else {
            return; // 4 billion texts: the index is full, not broken.
        };
        self.keys.insert(key);
        let mut ids: Vec<u32> = Vec::new();
        let (vocabulary, postings) = (&mut self.vocabulary, &mut self.postings);
        self.terms.each(text, &mut |term| {
            let id = match vocabulary.get(term) {
                Some(&id) => id,
                None => {
                    let id = u32::try_from(postings.len()).unwrap_or(u32::MAX);
                    if id < u32::MAX {
                        vocabulary.insert(term.to_string(), id);
                        postings.push(Vec::new());
                    }
                    id
                }
            };
            ids.push(id);
        });
        let length = u32::try_from(ids.len()).unwrap_or(u32::MAX);
        ids.sort_unstable();
        for run in ids.chunk_by(|a, b| a == b) {
            // u32::MAX: the vocabulary is full; such terms are not indexed.
            if let Some(list) = self.postings.get_mut(run[0] as usize) {
                list.push((doc, u32::try_from(run.len()).unwrap_or(u32::MAX)));
            }
        }
        self.docs.push(Doc { key, length });
        self.total_length += u64::from(length);
    }

    /// The terms `query` is searched by (its function words left out when
    /// it has others), each once.
    pub fn query_terms(&self, query: &str) -> Vec<String> {
        let mut terms = self.terms.of_query(query);
        terms.sort_unstable();
        terms.dedup();
        terms
    }

    /// The texts matching `query` best, at most `limit`, one per key (its
    /// best-scoring text), by score then key, both descending: among equal
    /// scores the newer text first. Deterministic for the same index and query.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        let weighted: Vec<(String, f64)> = self
            .query_terms(query)
            .into_iter()
            .map(|t| (t, 1.0))
            .collect();
        self.search_terms(&weighted, limit)
    }

    /// Terms to add to `query` from `feedback`, texts that matched it best
    /// (pseudo-relevance feedback): the terms of those texts that are not
    /// the query's nor function words, each scored by its share of each
    /// text times its inverse document frequency, the best `count`, weighted
    /// from `weight` (the best) down in proportion to their scores.
    pub fn expansion(
        &self,
        query: &str,
        feedback: &[&str],
        count: usize,
        weight: f64,
    ) -> Vec<(String, f64)> {
        let asked: std::collections::HashSet<String> = self.terms.of(query).into_iter().collect();
        let n = self.docs.len() as f64;
        let mut scores: HashMap<String, f64> = HashMap::new();
        for text in feedback {
            let terms: Vec<String> = self.terms.of(text);
            let length = terms.len().max(1) as f64;
            for term in terms {
                if asked.contains(&term)
                    || crate::stop::is_stop_word(&term)
                    || term.chars().count() < 3
                {
                    continue;
                }
                *scores.entry(term).or_default() += 1.0 / length;
            }
        }
        let mut scored: Vec<(String, f64)> = scores
            .into_iter()
            .filter_map(|(term, share)| {
                let df = self
                    .vocabulary
                    .get(&term)
                    .and_then(|&id| self.postings.get(id as usize))?
                    .len() as f64;
                // A term in one text says nothing beyond that text.
                (df > 1.0).then(|| {
                    let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                    (term, share * idf)
                })
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        scored.truncate(count);
        let best = scored.first().map_or(0.0, |t| t.1);
        if best <= 0.0 {
            return Vec::new();
        }
        scored
            .into_iter()
            .map(|(t, s)| (t, weight * s / best))
            .collect()
    }

    /// The texts matching `terms` (each with its weight) best, as
    /// [`RecallIndex::search`] ranks them.
    pub fn search_terms(&self, terms: &[(String, f64)], limit: usize) -> Vec<Hit> {
        if self.docs.is_empty() || limit == 0 {
            return Vec::new();
        }
        let n = self.docs.len() as f64;
        let average = (self.total_length as f64 / n).max(1.0);
        let mut scores: HashMap<u32, f64> = HashMap::new();
        let mut ceiling = 0.0;
        for (term, query_weight) in terms {
            let Some(list) = self
                .vocabulary
                .get(term)
                .and_then(|&id| self.postings.get(id as usize))
            else {
                continue;
            };
            let df = list.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            let idf = idf * query_weight;
            ceiling += idf * (K1 + 1.0);
            for &(doc, tf) in list {
                let length = f64::from(self.docs[doc as usize].length);
                let tf = f64::from(tf);
                let weight = tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * length / average));
                *scores.entry(doc).or_default() += idf * weight;
            }
        }
        // The best text of each key.
        let mut best: HashMap<usize, f64> = HashMap::new();
        for (doc, score) in scores {
            let key = self.docs[doc as usize].key;
            let slot = best.entry(key).or_insert(score);
            if score > *slot {
                *slot = score;
            }
        }
        // How far a match stands out from every key the index holds (those
        // matching nothing at 0), in robust standard deviations: the median
        // absolute deviation, so one outlier (the query's own text, when it
        // is indexed) does not widen it. When most keys match nothing, any
        // match stands out.
        let unmatched = self.keys.len().saturating_sub(best.len());
        let mut matched: Vec<f64> = best.values().copied().collect();
        let centre = stats::median_with_zeros(&mut matched, unmatched);
        let mut deviations: Vec<f64> = matched.iter().map(|s| (s - centre).abs()).collect();
        deviations.extend(std::iter::repeat_n(centre, unmatched.min(1)));
        let spread = 1.4826 * stats::median_weighted(&mut deviations, unmatched);
        let mut hits: Vec<Hit> = best
            .into_iter()
            .filter(|&(_, score)| score > 0.0)
            .map(|(key, score)| Hit {
                key,
                score,
                relevance: if ceiling > 0.0 {
                    (score / ceiling).min(1.0)
                } else {
                    0.0
                },
                distinction: if spread > 0.0 {
                    ((score - centre) / spread).clamp(0.0, MAX_DISTINCTION)
                } else if score > centre {
                    MAX_DISTINCTION
                } else {
                    0.0
                },
            })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.key.cmp(&a.key)));
        hits.truncate(limit);
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(texts: &[&str]) -> RecallIndex {
        let mut index = RecallIndex::new();
        for (key, text) in texts.iter().enumerate() {
            index.add(key, text);
        }
        index
    }

    #[test]
    fn the_text_sharing_the_rarer_terms_ranks_first() {
        let index = index(&[
            "the cat sat on the mat",
            "the dog chased the cat",
            "my flight to Lisbon leaves on Friday",
            "the weather is nice",
        ]);
        let hits = index.search("When does the flight to Lisbon leave?", 10);
        assert_eq!(hits[0].key, 2);
        assert!(hits.iter().all(|h| h.score > 0.0));
        // "the" is in three texts and a function word: it is not searched by.
        assert_eq!(hits.len(), 1);
        // A query of function words alone is searched by them.
        let the = index.search("the", 10);
        assert_eq!(the.len(), 3);
        assert_eq!(the[0].key, 1, "twice in the shortest text");
    }

    #[test]
    fn stems_match_across_forms() {
        let index = index(&["we are migrating the databases", "lunch was good"]);
        assert_eq!(index.search("database migration", 10)[0].key, 0);
    }

    #[test]
    fn a_key_appears_once_with_its_best_chunk() {
        let mut index = RecallIndex::new();
        index.add(7, "alpha beta");
        index.add(7, "alpha alpha gamma");
        index.add(8, "delta");
        let hits = index.search("alpha", 10);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].key, 7);
    }

    #[test]
    fn limit_and_empty_cases() {
        let index = index(&["a b c", "a b", "a"]);
        assert_eq!(index.search("a", 2).len(), 2);
        assert!(index.search("a", 0).is_empty());
        assert!(index.search("zzz", 5).is_empty());
        assert!(index.search("", 5).is_empty());
        assert!(RecallIndex::new().search("a", 5).is_empty());
    }

    #[test]
    fn equal_scores_put_the_newer_text_first_and_repeat_exactly() {
        let index = index(&["same words here", "same words here", "same words here"]);
        let hits = index.search("words", 10);
        assert_eq!(hits.iter().map(|h| h.key).collect::<Vec<_>>(), [2, 1, 0]);
        assert_eq!(index.search("words", 10), hits);
    }

    #[test]
    fn incremental_adds_equal_a_rebuild() {
        let texts = ["one two", "two three", "three four five", "five six"];
        let mut grown = RecallIndex::new();
        for (i, t) in texts.iter().enumerate() {
            grown.add(i, t);
            let _ = grown.search("two five", 3);
        }
        let rebuilt = index(&texts);
        assert_eq!(grown.search("two five", 3), rebuilt.search("two five", 3));
    }
}
