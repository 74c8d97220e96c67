//! The facts of the turns a compaction folds: the sentences that carry
//! names, numbers, dates, paths, identifiers, decisions or errors, kept
//! word for word so the built-in digest loses as little as it can.

use context_compiler_text::order::{descending, sort_stable_by_key};

/// Words that mark a decision or a failure wherever they appear.
const MARKERS: &[&str] = &[
    "decided",
    "decision",
    "agreed",
    "chose",
    "must",
    "never",
    "always",
    "error",
    "failed",
    "fails",
    "exception",
    "deadline",
    "remember",
];

/// One sentence of a folded turn and how much it carries.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Fact {
    /// The order the sentence came in (older first).
    pub order: usize,
    /// The sentence, on one line.
    pub text: String,
    /// How many fact-bearing words it holds.
    pub weight: usize,
}

/// Whether `word` (as written, punctuation trimmed) carries a fact: a
/// number or date, a path, an identifier, an address, or a name (a
/// capitalised word that does not start the sentence).
fn carries(word: &str, starts_sentence: bool) -> bool {
    let word = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '/' && c != '_');
    if word.is_empty() {
        return false;
    }
    let lower = word.to_lowercase();
    word.chars().any(|c| c.is_ascii_digit())
        || word.contains(['/', '_', '@'])
        || (word.contains('.') && !word.ends_with('.'))
        || word.chars().skip(1).any(char::is_uppercase)
        || (!starts_sentence && word.chars().next().is_some_and(char::is_uppercase))
        || MARKERS.contains(&lower.as_str())
}

/// The sentences of `text` (cut at `.`, `!`, `?` followed by a space, and
/// at line ends).
fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive(['\n'])
        .flat_map(|line| {
            line.split_inclusive(". ")
                .flat_map(|s| s.split_inclusive("? "))
        })
        .flat_map(|s| s.split_inclusive("! "))
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// The fact-bearing sentences of `text`, numbered from `order` on.
pub(crate) fn facts_of(text: &str, order: &mut usize) -> Vec<Fact> {
    let mut out = Vec::new();
    for sentence in sentences(text) {
        let weight = sentence
            .split_whitespace()
            .enumerate()
            .filter(|(i, w)| carries(w, *i == 0))
            .count();
        *order += 1;
        if weight > 0 {
            out.push(Fact {
                order: *order,
                text: sentence
                    .chars()
                    .map(|c| if c.is_control() { ' ' } else { c })
                    .collect(),
                weight,
            });
        }
    }
    out
}

/// The facts kept within `max_chars` (each cut after `sentence_chars`):
/// the weightiest first, newer among equals, then shown in their order.
pub(crate) fn keep(mut facts: Vec<Fact>, max_chars: usize, sentence_chars: usize) -> Vec<String> {
    sort_stable_by_key(&mut facts, |f| {
        (descending(f.weight as u64), descending(f.order as u64))
    });
    let mut used = 0usize;
    let mut kept: Vec<(usize, String)> = Vec::new();
    for fact in facts {
        let text = crate::normalize::summary::summarize_text(&fact.text, sentence_chars);
        let cost = text.chars().count() + 3;
        if used + cost > max_chars {
            continue;
        }
        used += cost;
        kept.push((fact.order, text));
    }
    sort_stable_by_key(&mut kept, |(order, _)| (*order as u64, 0));
    kept.dedup_by(|a, b| a.1 == b.1);
    kept.into_iter().map(|(_, text)| text).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_with_names_numbers_paths_and_decisions_are_facts() {
        let mut order = 0;
        let facts = facts_of(
            "Thanks, that helps. My dentist is at the Alfama clinic on 12 March. \
             ok sounds good! We decided to keep src/session/log.rs as it is.\nfine",
            &mut order,
        );
        let texts: Vec<&str> = facts.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "My dentist is at the Alfama clinic on 12 March.",
                "We decided to keep src/session/log.rs as it is."
            ]
        );
        assert_eq!(order, 5);
    }

    #[test]
    fn the_weightiest_are_kept_within_the_room_in_their_order() {
        let mut order = 0;
        let mut facts = facts_of(
            "Ana lives in Porto. Call 555-0100 about ticket 42 on 2024-05-01.",
            &mut order,
        );
        facts.extend(facts_of("Bo likes Lisbon.", &mut order));
        let kept = keep(facts, 70, 200);
        assert_eq!(
            kept,
            [
                "Call 555-0100 about ticket 42 on 2024-05-01.",
                "Bo likes Lisbon."
            ]
        );
    }
}
