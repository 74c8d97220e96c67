//! The lines of a long tool output that bear on a question: what a
//! recalled tool output shows instead of its whole text.

use context_compiler_text::order::{float_descending, sort_positions, sort_stable_by_key};
use std::collections::{HashMap, HashSet};

use crate::recall::Terms;

/// Lines an excerpt keeps at most.
pub(crate) const EXCERPT_LINES: usize = 3;
/// Characters of each kept line at most.
pub(crate) const EXCERPT_LINE_CHARS: usize = 200;

/// `line` cut to [`EXCERPT_LINE_CHARS`] characters, trimmed.
fn cut_line(line: &str) -> String {
    let line = line.trim();
    match line.char_indices().nth(EXCERPT_LINE_CHARS) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.to_string(),
    }
}

/// The lines of `text` that match `query` best, in their order in `text`,
/// and how many lines `text` has. A line scores the sum, over the query's
/// distinct terms it holds, of how rare the term is among the lines (the
/// log of the inverse of its share of lines: a term on every line of a log
/// says nothing of which line is meant); lines scoring under half the best
/// are left out. With no matching line, the first non-empty line stands
/// for the text.
pub(crate) fn matching_lines(terms: &Terms, query: &str, text: &str) -> (Vec<String>, usize) {
    let wanted: HashSet<String> = terms.of(query).into_iter().collect();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let held: Vec<HashSet<String>> = lines
        .iter()
        .map(|l| {
            terms
                .of(l)
                .into_iter()
                .filter(|t| wanted.contains(t))
                .collect()
        })
        .collect();
    let mut lines_with: HashMap<&str, usize> = HashMap::new();
    for line in &held {
        for term in line {
            *lines_with.entry(term.as_str()).or_default() += 1;
        }
    }
    let total = lines.len().max(1) as f64;
    let mut scored: Vec<(usize, f64)> = held
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let score = line
                .iter()
                .map(|t| {
                    let n = lines_with.get(t.as_str()).copied().unwrap_or(1) as f64;
                    (total / n).ln()
                })
                .sum::<f64>();
            (i, score)
        })
        .filter(|(_, score)| *score > 0.0)
        .collect();
    sort_stable_by_key(&mut scored, |(i, s)| (float_descending(*s), *i as u64));
    let best = scored.first().map_or(0.0, |(_, s)| *s);
    let mut kept: Vec<usize> = scored
        .iter()
        .take_while(|(_, score)| *score >= best / 2.0)
        .take(EXCERPT_LINES)
        .map(|(i, _)| *i)
        .collect();
    if kept.is_empty() && !lines.is_empty() {
        kept.push(0);
    }
    sort_positions(&mut kept);
    let out = kept
        .iter()
        .filter_map(|&i| lines.get(i))
        .map(|l| cut_line(l))
        .collect();
    (out, lines.len())
}

/// A recalled tool output as one short line: the tool, where the whole
/// output is read (`read_artifact` takes the event id), the matching
/// lines, and how many lines were left out.
pub(crate) fn tool_excerpt(
    terms: &Terms,
    query: &str,
    tool: &str,
    id: &str,
    result: &str,
) -> String {
    let (lines, total) = matching_lines(terms, query, result);
    let mut out = format!("{tool} [{id}]: {}", lines.join(" … "));
    let left = total.saturating_sub(lines.len());
    if left > 0 {
        out.push_str(&format!(" (+{left} more lines)"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rare_matching_lines_are_kept_in_order() {
        let log: String = (0..60)
            .map(|i| {
                if i == 41 {
                    "02:41 nightly job step 41 FAILED disk quota exceeded\n".to_string()
                } else {
                    format!("02:{i:02} nightly job step {i} ok\n")
                }
            })
            .collect();
        let terms = Terms::new();
        let (lines, total) = matching_lines(&terms, "why did the nightly job fail on quota?", &log);
        assert_eq!(total, 60);
        assert!(lines.len() <= EXCERPT_LINES);
        assert!(lines[0].contains("quota"), "{lines:?}");
        let text = tool_excerpt(&terms, "quota", "read_log", "ev-1", &log);
        assert!(text.starts_with("read_log [ev-1]: 02:41"), "{text}");
        assert!(text.ends_with("(+59 more lines)"), "{text}");
    }

    #[test]
    fn no_match_gives_the_first_line_and_long_lines_are_cut() {
        let terms = Terms::new();
        let long = "x".repeat(1000);
        let (lines, total) = matching_lines(&terms, "nothing here", &format!("\n\n{long}\nsecond"));
        assert_eq!(total, 2);
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].chars().count(), EXCERPT_LINE_CHARS + 1);
        assert_eq!(matching_lines(&terms, "q", ""), (vec![], 0));
    }
}
