//! Patterns tried at one position of a text, as a scan of the whole text
//! would see them there.
//!
//! `regex-lite` has no anchored search at an offset, and a search started at
//! an offset runs on to the end of the text when nothing matches there. A
//! pattern anchored with `^` on the text cut at the start stops within a few
//! bytes, but loses what lies before the start (which `\b` and `^` look at).
//! So the cut keeps one character before the start, which the pattern
//! consumes first: `^(?s:.)(?:pattern)`.

use regex_lite::{CaptureLocations, Regex};

/// A pattern that matches only at a given start.
pub(crate) struct Anchored {
    /// For a start at the beginning of the text.
    at_text_start: Regex,
    /// For any other start: the character before it, then the pattern.
    after_char: Regex,
}

/// The byte spans of a match's groups in the text (group 0: the match).
pub(crate) struct Groups {
    spans: Vec<Option<(usize, usize)>>,
}

/// The successive matches of a pattern in one text.
pub(crate) trait Matches {
    /// The leftmost match starting at or after byte `pos`, if any; `pos`
    /// never decreases from one call to the next.
    fn next_from(&mut self, text: &str, pos: usize) -> Option<Groups>;
}

/// The matches of an [`Anchored`] pattern that start at the given starts:
/// the same as a scan of the whole text when every match starts at one of
/// them.
pub(crate) struct AtStarts<'r> {
    pattern: &'r Anchored,
    starts: Vec<usize>,
    next: usize,
    locations: CaptureLocations,
}

impl<'r> AtStarts<'r> {
    /// The matches of `pattern` at `starts` (any order, repeats allowed).
    pub(crate) fn new(pattern: &'r Anchored, mut starts: Vec<usize>) -> AtStarts<'r> {
        crate::order::sort_positions(&mut starts);
        starts.dedup();
        AtStarts {
            pattern,
            starts,
            next: 0,
            locations: pattern.locations(),
        }
    }
}

impl Matches for AtStarts<'_> {
    fn next_from(&mut self, text: &str, pos: usize) -> Option<Groups> {
        while let Some(&start) = self.starts.get(self.next) {
            self.next += 1;
            if start >= pos {
                if let Some(groups) = self.pattern.at(text, start, &mut self.locations) {
                    return Some(groups);
                }
            }
        }
        None
    }
}

impl Groups {
    /// Groups from their spans (group 0 first).
    #[cfg(test)]
    pub(crate) fn from_spans(spans: Vec<Option<(usize, usize)>>) -> Groups {
        Groups { spans }
    }

    /// A match of one group, the whole match, from `start` to `end`.
    pub(crate) fn whole_match(start: usize, end: usize) -> Groups {
        Groups {
            spans: vec![Some((start, end))],
        }
    }

    /// The span of group `i`, if it took part in the match.
    pub(crate) fn get(&self, i: usize) -> Option<(usize, usize)> {
        self.spans.get(i).copied().flatten()
    }

    /// The span of the whole match.
    pub(crate) fn whole(&self) -> (usize, usize) {
        self.get(0).unwrap_or((0, 0))
    }
}

impl Anchored {
    /// Compiles `pattern` (`regex-lite` syntax) for anchored use.
    pub(crate) fn new(pattern: &str) -> Result<Anchored, regex_lite::Error> {
        Ok(Anchored {
            at_text_start: Regex::new(&format!("^(?:{pattern})"))?,
            after_char: Regex::new(&format!("^(?s:.)(?:{pattern})"))?,
        })
    }

    /// Reusable storage for [`Anchored::at`].
    pub(crate) fn locations(&self) -> CaptureLocations {
        self.at_text_start.capture_locations()
    }

    /// The index of the group named `name`.
    pub(crate) fn group(&self, name: &str) -> Option<usize> {
        self.at_text_start
            .capture_names()
            .position(|n| n == Some(name))
    }

    /// The match starting exactly at byte `start` of `text`, if any (none
    /// when `start` is not a character boundary).
    pub(crate) fn at(
        &self,
        text: &str,
        start: usize,
        locations: &mut CaptureLocations,
    ) -> Option<Groups> {
        if !text.is_char_boundary(start) {
            return None;
        }
        let (regex, base) = if start == 0 {
            (&self.at_text_start, 0)
        } else {
            let mut before = start - 1;
            while !text.is_char_boundary(before) {
                before -= 1;
            }
            (&self.after_char, before)
        };
        regex.captures_read_at(locations, &text[base..], 0)?;
        let spans = (0..locations.len())
            .map(|i| {
                locations
                    .get(i)
                    .map(|(s, e)| (base + s, base + e))
                    .map(|(s, e)| if i == 0 { (start, e) } else { (s, e) })
            })
            .collect();
        Some(Groups { spans })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_only_at_the_start_with_the_text_before_it_in_view() {
        let a = Anchored::new(r"\bsk-[a-z]{3}").unwrap();
        let mut l = a.locations();
        let t = "xsk-abc sk-def é sk-ghi";
        assert!(a.at(t, 1, &mut l).is_none(), "no word boundary after x");
        assert_eq!(a.at(t, 8, &mut l).map(|g| g.whole()), Some((8, 14)));
        assert!(a.at(t, 0, &mut l).is_none());
        assert!(a.at(t, 7, &mut l).is_none(), "anchored: no match later on");
        // After a multi-byte character, and not inside one.
        let s = t.find("sk-ghi").unwrap();
        assert_eq!(a.at(t, s, &mut l).map(|g| g.whole()), Some((s, s + 6)));
        assert!(a.at(t, s - 2, &mut l).is_none());
    }

    #[test]
    fn groups_are_in_text_offsets_and_caret_means_the_text_start() {
        let a = Anchored::new(r#"(?:^|[\s=])(AP[0-9]{3})"#).unwrap();
        let mut l = a.locations();
        let g = a.at("AP123", 0, &mut l).unwrap();
        assert_eq!(g.get(1), Some((0, 5)));
        let g = a.at("x=AP123", 1, &mut l).unwrap();
        assert_eq!((g.whole(), g.get(1)), ((1, 7), Some((2, 7))));
        assert!(a.at("xAP123", 1, &mut l).is_none(), "^ is not mid-text");
        let named = Anchored::new(r"(?P<key>k)=(?P<v>\d)").unwrap();
        assert_eq!((named.group("key"), named.group("v")), (Some(1), Some(2)));
    }
}
