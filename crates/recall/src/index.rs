//! An inverted index ranked with Okapi BM25, built incrementally: a text
//! added is indexed once, in time proportional to its length, and a search
//! touches only the postings of its terms.

use crate::packed::{packed, PackedState};
use crate::stats;
use crate::terms::{Piece, Terms};
use crate::HashMap;
use context_compiler_text::order::sort_stable_by;

pub use crate::stats::MAX_DISTINCTION;

/// Words as written whose term id the index remembers at most.
const MAX_WORD_IDS: usize = 200_000;

/// BM25's term-frequency saturation.
const K1: f64 = 1.2;
/// BM25's length normalisation.
const B: f64 = 0.75;

/// One indexed text: where it came from and how many terms it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Doc {
    /// The slot of the caller's key of the text (a session event's
    /// position) in [`RecallIndex::keys`].
    slot: u32,
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
    /// The term id of each word as written that was indexed (at most
    /// [`MAX_WORD_IDS`]): most words of a text were seen before, and
    /// their term is found in one lookup, without stemming. Short words
    /// (nearly all) are keyed by their bytes packed in a number, compared
    /// without reading a string elsewhere in memory.
    short_word_ids: std::collections::HashMap<u128, u32, PackedState>,
    /// As `short_word_ids`, for longer words.
    word_ids: HashMap<String, u32>,
    /// Per term id, the texts holding it and how often, in the order added.
    postings: Vec<Vec<(u32, u32)>>,
    docs: Vec<Doc>,
    total_length: u64,
    /// Distinct keys indexed, in the order first seen: a key's slot is its
    /// place here.
    keys: Vec<usize>,
    /// Each key's slot.
    slots: HashMap<usize, u32>,
    /// Per term id, its count in the text being added (zero between adds).
    counts: Vec<u32>,
    /// The term ids of the text being added, in order.
    ids: Vec<u32>,
    /// The distinct term ids of the text being added.
    distinct: Vec<u32>,
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
        let slot = match self.slots.get(&key) {
            Some(&slot) => slot,
            None => {
                // Fewer keys than texts, so this fits as `doc` did.
                let slot = u32::try_from(self.keys.len()).unwrap_or(u32::MAX);
                self.slots.insert(key, slot);
                self.keys.push(key);
                slot
            }
        };
        // Buffers kept between adds, so adding allocates only what grows.
        let mut ids = std::mem::take(&mut self.ids);
        let mut distinct = std::mem::take(&mut self.distinct);
        ids.clear();
        distinct.clear();
        let (terms, vocabulary, postings) = (&self.terms, &mut self.vocabulary, &mut self.postings);
        let (short_word_ids, word_ids) = (&mut self.short_word_ids, &mut self.word_ids);

        let mut intern = |term: &str| match vocabulary.get(term) {
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
        terms.pieces(text, &mut |piece| match piece {
            Piece::Word(word) => {
                let packed = packed(word);
                let known = match packed {
                    Some(p) => short_word_ids.get(&p),
                    None => word_ids.get(word),
                };

                if let Some(&id) = known {
                    ids.push(id);
                } else if let Some(term) = terms.term_of_word(word) {
                    let id = intern(&term);
                    if short_word_ids.len() + word_ids.len() < MAX_WORD_IDS {
                        match packed {
                            Some(p) => short_word_ids.insert(p, id),
                            None => word_ids.insert(word.to_string(), id),
                        };
                    }
                    ids.push(id);
                }
            }
            Piece::Term(term) => ids.push(intern(term)),
        });
        let length = u32::try_from(ids.len()).unwrap_or(u32::MAX);
        // Each term's count in the text, in a table kept zeroed between
        // texts (counting, not sorting: linear in the text's terms).
        let counts = &mut self.counts;
        counts.resize(self.postings.len(), 0);
        for &id in &ids {
            // u32::MAX: the vocabulary is full; such terms are not indexed.
            if let Some(count) = counts.get_mut(id as usize) {
                if *count == 0 {
                    distinct.push(id);
                }
                *count = count.saturating_add(1);
            }
        }
        for &id in &distinct {
            if let (Some(count), Some(list)) = (
                counts.get_mut(id as usize),
                self.postings.get_mut(id as usize),
            ) {
                list.push((doc, *count));
                *count = 0;
            }
        }
        self.docs.push(Doc { slot, length });
        (self.ids, self.distinct) = (ids, distinct);
        self.total_length += u64::from(length);
    }

    /// The terms `query` is searched by (its function words left out when
    /// it has others), each once.
    pub fn query_terms(&self, query: &str) -> Vec<String> {
        let mut terms = self.terms.of_query(query);
        sort_stable_by(&mut terms, |a, b| a.cmp(b));
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
        let mut scores: HashMap<String, f64> = HashMap::default();
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
        sort_stable_by(&mut scored, |a, b| {
            b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0))
        });
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

    /// The texts matching `terms` (each with its weight; terms weighing
    /// nothing or less are left out) best, as [`RecallIndex::search`] ranks
    /// them.
    ///
    /// Every posting of the terms is scored, into one score per text (an
    /// array, not a map): a hit's distinction needs the median score of
    /// every key matching any term, so the search cannot stop at the best
    /// `limit` as top-k pruning (WAND, MaxScore) would.
    pub fn search_terms(&self, terms: &[(String, f64)], limit: usize) -> Vec<Hit> {
        if self.docs.is_empty() || limit == 0 {
            return Vec::new();
        }
        let n = self.docs.len() as f64;
        let average = (self.total_length as f64 / n).max(1.0);
        let mut scores = vec![0.0_f64; self.docs.len()];
        let mut touched: Vec<u32> = Vec::new();
        let mut ceiling = 0.0;
        for (term, query_weight) in terms {
            if !(*query_weight > 0.0 && query_weight.is_finite()) {
                continue;
            }
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
                let (Some(score), Some(d)) =
                    (scores.get_mut(doc as usize), self.docs.get(doc as usize))
                else {
                    continue;
                };
                let (tf, length) = (f64::from(tf), f64::from(d.length));
                let weight = tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * length / average));
                if *score == 0.0 {
                    touched.push(doc);
                }
                *score += idf * weight;
            }
        }
        // The best text of each key, by slot.
        let mut best = vec![0.0_f64; self.keys.len()];
        let mut matched_slots: Vec<u32> = Vec::new();
        for doc in touched {
            let score = scores[doc as usize];
            let Some(slot) = self.docs.get(doc as usize).map(|d| d.slot as usize) else {
                continue;
            };
            let Some(b) = best.get_mut(slot) else {
                continue;
            };
            if *b == 0.0 {
                matched_slots.push(slot as u32);
            }
            if score > *b {
                *b = score;
            }
        }
        // How far a match stands out from every key the index holds (those
        // matching nothing at 0), in robust standard deviations: the median
        // absolute deviation, so one outlier (the query's own text, when it
        // is indexed) does not widen it. When most keys match nothing, any
        // match stands out.
        let unmatched = self.keys.len().saturating_sub(matched_slots.len());
        let mut matched: Vec<f64> = matched_slots.iter().map(|&s| best[s as usize]).collect();
        let centre = stats::median_with_zeros(&mut matched, unmatched);
        let mut deviations: Vec<f64> = matched.iter().map(|s| (s - centre).abs()).collect();
        deviations.extend(std::iter::repeat_n(centre, unmatched.min(1)));
        let spread = 1.4826 * stats::median_weighted(&mut deviations, unmatched);
        // The best `limit` keys: by score, then the newer key.
        let mut ranked: Vec<(f64, usize)> = matched_slots
            .iter()
            .filter_map(|&s| {
                let score = best[s as usize];
                Some((score, *self.keys.get(s as usize)?)).filter(|_| score > 0.0)
            })
            .collect();
        let order = |a: &(f64, usize), b: &(f64, usize)| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1));
        if ranked.len() > limit {
            ranked.select_nth_unstable_by(limit - 1, order);
            ranked.truncate(limit);
        }
        ranked.sort_unstable_by(order);
        ranked
            .into_iter()
            .map(|(score, key)| Hit {
                key,
                score,
                relevance: if ceiling > 0.0 {
                    (score / ceiling).min(1.0)
                } else {
                    0.0
                },
                distinction: stats::distinction(score, centre, spread),
            })
            .collect()
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

    /// BM25 as its definition reads, text by text, with every key's best
    /// text, sorted medians and a full sort: what the index must give.
    fn reference(texts: &[(usize, &str)], query: &[(String, f64)], limit: usize) -> Vec<Hit> {
        let terms = Terms::new();
        let docs: Vec<(usize, Vec<String>)> =
            texts.iter().map(|(k, t)| (*k, terms.of(t))).collect();
        let n = docs.len() as f64;
        let average = (docs.iter().map(|d| d.1.len()).sum::<usize>() as f64 / n).max(1.0);
        let (mut scores, mut ceiling) = (vec![0.0; docs.len()], 0.0);
        for (term, weight) in query.iter().filter(|(_, w)| *w > 0.0) {
            let df = docs.iter().filter(|d| d.1.contains(term)).count() as f64;
            if df == 0.0 {
                continue;
            }
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln() * weight;
            ceiling += idf * (K1 + 1.0);
            for (score, (_, words)) in scores.iter_mut().zip(&docs) {
                let tf = words.iter().filter(|w| *w == term).count() as f64;
                if tf > 0.0 {
                    let length = words.len() as f64;
                    // Associated as the index computes it: texts of equal
                    // score must tie exactly, for the order by key to hold.
                    *score +=
                        idf * (tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * length / average)));
                }
            }
        }
        let mut best: std::collections::BTreeMap<usize, f64> =
            docs.iter().map(|d| (d.0, 0.0)).collect();
        for (score, (key, _)) in scores.iter().zip(&docs) {
            let b = best.entry(*key).or_default();
            *b = b.max(*score);
        }
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            match v.len() {
                0 => 0.0,
                n if n % 2 == 1 => v[n / 2],
                n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
            }
        };
        let all: Vec<f64> = best.values().copied().collect();
        let centre = median(all.clone());
        let spread = 1.4826 * median(all.iter().map(|s| (s - centre).abs()).collect());
        let mut hits: Vec<Hit> = best
            .into_iter()
            .filter(|&(_, s)| s > 0.0)
            .map(|(key, score)| Hit {
                key,
                score,
                relevance: (score / ceiling).min(1.0),
                distinction: stats::distinction(score, centre, spread),
            })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.key.cmp(&a.key)));
        hits.truncate(limit);
        hits
    }

    proptest::proptest! {
        #[test]
        fn search_gives_what_bm25_s_definition_gives(
            texts in proptest::collection::vec(
                (0usize..12, proptest::collection::vec(0usize..9, 0..14)),
                1..40,
            ),
            query in proptest::collection::vec((0usize..11, 0u8..4), 1..5),
            limit in 1usize..8,
        ) {
            const WORDS: [&str; 11] = [
                "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta",
                "iota", "kappa", "lambda",
            ];
            let texts: Vec<(usize, String)> = texts
                .into_iter()
                .map(|(key, words)| (key, words.iter().map(|&w| WORDS[w]).collect::<Vec<_>>().join(" ")))
                .collect();
            let mut index = RecallIndex::new();
            for (key, text) in &texts {
                index.add(*key, text);
            }
            // Weights of 0 leave a term out; the others weigh 1 to 3.
            let mut query: Vec<(String, f64)> = query
                .into_iter()
                .map(|(w, weight)| (WORDS[w].to_string(), f64::from(weight)))
                .collect();
            query.sort_by(|a, b| a.0.cmp(&b.0));
            query.dedup_by(|a, b| a.0 == b.0);
            let borrowed: Vec<(usize, &str)> = texts.iter().map(|(k, t)| (*k, t.as_str())).collect();
            let want = reference(&borrowed, &query, limit);
            let got = index.search_terms(&query, limit);
            proptest::prop_assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                proptest::prop_assert_eq!(g.key, w.key);
                proptest::prop_assert!((g.score - w.score).abs() < 1e-9, "{} {}", g.score, w.score);
                proptest::prop_assert!((g.relevance - w.relevance).abs() < 1e-9);
                proptest::prop_assert!((g.distinction - w.distinction).abs() < 1e-6, "{} {}", g.distinction, w.distinction);
            }
        }
    }

    #[test]
    fn terms_weighing_nothing_or_less_are_left_out() {
        let index = index(&["red apple", "green pear"]);
        let hits = index.search_terms(&[("appl".into(), 0.0), ("pear".into(), -1.0)], 5);
        assert!(hits.is_empty());
        let hits = index.search_terms(&[("appl".into(), f64::NAN), ("pear".into(), 1.0)], 5);
        assert_eq!(hits.iter().map(|h| h.key).collect::<Vec<_>>(), [1]);
    }

    #[test]
    fn short_and_long_words_find_their_terms_again() {
        let long = "supercalifragilisticexpialidocious";
        let index = index(&[&format!("{long} ab"), "ab abc", long]);
        assert_eq!(index.search(long, 5).len(), 2);
        assert_eq!(index.search("abc", 5).len(), 1);
        assert_eq!(index.search("ab", 5).len(), 2);
    }
}
