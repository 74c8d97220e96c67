//! The `pem-private-key` rule without re-reading text: its pattern's body
//! (`[^"]*?` up to the END line) would run from every BEGIN header to the
//! next END, so text with many headers and no END (`grep -rn "BEGIN RSA
//! PRIVATE KEY"` output) took time quadratic in its length. Here the END
//! lines and the quotes are found once per text, and each header looks up
//! the first END after it: the same matches as the pattern
//! (`equivalence.rs` checks it against a scan of the whole text), in linear
//! time.

use std::sync::OnceLock;

use regex_lite::CaptureLocations;

use super::anchored::{Anchored, Groups, Matches};

/// A private key's BEGIN line.
const HEADER: &str = r"-----BEGIN[A-Z ]*PRIVATE KEY(?: BLOCK)?-----";
/// A private key's END line.
const FOOTER: &str = r"-----END[A-Z ]*PRIVATE KEY(?: BLOCK)?-----";
/// What follows a header with no END line: its base64 lines.
const LINES: &str = r#"(?:(?:\r?\n|\\r?\\n)+(?:[ \t]*[A-Za-z0-9+/=]{16,}|[A-Za-z-]+:[^\n\\"]*))*"#;

struct Patterns {
    header: Anchored,
    footer: Anchored,
    lines: Anchored,
}

fn patterns() -> &'static Patterns {
    static PATTERNS: OnceLock<Patterns> = OnceLock::new();
    // Constants checked by the tests.
    PATTERNS.get_or_init(|| Patterns {
        header: Anchored::new(HEADER).expect("PEM header pattern compiles"),
        footer: Anchored::new(FOOTER).expect("PEM footer pattern compiles"),
        lines: Anchored::new(LINES).expect("PEM lines pattern compiles"),
    })
}

/// The matches of the PEM rule at the given starts (where `-----BEGIN` is).
pub(crate) struct PemMatches {
    starts: Vec<usize>,
    next: usize,
    /// Where each END line starts and ends, in order (found on first use).
    footers: Option<Vec<(usize, usize)>>,
    /// Where each `"` is, in order (found on first use).
    quotes: Option<Vec<usize>>,
    locations: CaptureLocations,
}

impl PemMatches {
    /// The matches at `starts` (any order, repeats allowed).
    pub(crate) fn new(mut starts: Vec<usize>) -> PemMatches {
        crate::order::sort_positions(&mut starts);
        starts.dedup();
        PemMatches {
            starts,
            next: 0,
            footers: None,
            quotes: None,
            locations: patterns().header.locations(),
        }
    }

    /// The end of the match starting at `start`, whose header ends at
    /// `header_end`: through the first END line after it when no `"` comes
    /// first, else over the base64 lines that follow.
    fn end(&mut self, text: &str, header_end: usize) -> usize {
        let p = patterns();
        let locations = &mut self.locations;
        let footers = self.footers.get_or_insert_with(|| {
            text.match_indices("-----END")
                .filter_map(|(at, _)| {
                    let mut l = p.footer.locations();
                    p.footer.at(text, at, &mut l).map(|g| g.whole())
                })
                .collect()
        });
        let quotes = self.quotes.get_or_insert_with(|| {
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'"')
                .map(|(i, _)| i)
                .collect()
        });
        let footer = footers.get(footers.partition_point(|&(s, _)| s < header_end));
        let quote = quotes.get(quotes.partition_point(|&q| q < header_end));
        match footer {
            Some(&(s, e)) if quote.is_none_or(|&q| q >= s) => e,
            _ => p
                .lines
                .at(text, header_end, locations)
                .map_or(header_end, |g| g.whole().1),
        }
    }
}

impl Matches for PemMatches {
    fn next_from(&mut self, text: &str, pos: usize) -> Option<Groups> {
        while let Some(&start) = self.starts.get(self.next) {
            self.next += 1;
            if start < pos {
                continue;
            }
            let header = patterns().header.at(text, start, &mut self.locations);
            if let Some(header) = header {
                let end = self.end(text, header.whole().1);
                return Some(Groups::whole_match(start, end));
            }
        }
        None
    }
}

/// The rule's whole pattern, as [`super::rules`] states it: the header,
/// then the body up to an END line or the base64 lines.
#[cfg(test)]
pub(crate) fn pattern() -> String {
    format!(r#"{HEADER}(?:[^"]*?{FOOTER}|{LINES})"#)
}
