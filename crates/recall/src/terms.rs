//! The terms a text is indexed and searched by.
//!
//! Words come from Unicode word segmentation (UAX #29, the
//! `unicode-segmentation` crate). Words joined by a path or identifier
//! connector with no space (`src/session/log.rs`, `2024-05-01`,
//! `user@example.com`, `v1.2.3`) are also kept whole, lower-cased, so an
//! exact identifier, path, version or date matches as one term beside its
//! parts. Alphabetic words are lower-cased and stemmed with the Snowball
//! English stemmer (`rust-stemmers`); numbers are kept as written. Runs of
//! CJK characters, which have no spaces to split on, give overlapping
//! character bigrams (a single character alone), as CJK search engines
//! index them without a dictionary.

use rust_stemmers::{Algorithm, Stemmer};
use unicode_segmentation::UnicodeSegmentation;

/// Terms longer than this many bytes are cut (a base64 blob or a minified
/// line is one "word"; its head is enough to match it again).
const MAX_TERM_BYTES: usize = 64;

/// Characters that join words into one identifier, path, date or address.
fn is_connector(c: char) -> bool {
    matches!(c, '/' | '\\' | '.' | '-' | '_' | ':' | '@' | '#' | '+')
}

/// Whether `c` is written without spaces between words: Han, kana, Hangul.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x3400..=0x4DBF    // CJK Extension A
        | 0x4E00..=0x9FFF    // CJK Unified Ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF    // CJK Compatibility Ideographs
        | 0x20000..=0x2FA1F) // Extensions B–F, compatibility supplement
}

/// Cuts `term` to at most [`MAX_TERM_BYTES`] on a character boundary.
fn cut(mut term: String) -> String {
    if term.len() > MAX_TERM_BYTES {
        let mut end = MAX_TERM_BYTES;
        while !term.is_char_boundary(end) {
            end -= 1;
        }
        term.truncate(end);
    }
    term
}

/// Emits the overlapping bigrams of a CJK run (a single character alone)
/// and empties it.
fn bigrams<F: FnMut(Piece<'_>)>(run: &mut Vec<char>, out: &mut F) {
    if run.is_empty() {
        return;
    }
    let mut pair = String::new();
    match run.len() {
        0 => {}
        1 => out(Piece::Term(run[0].encode_utf8(&mut [0u8; 4]))),
        _ => {
            for two in run.windows(2) {
                pair.clear();
                pair.extend(two);
                out(Piece::Term(&pair));
            }
        }
    }
    run.clear();
}

/// [`Terms::pieces`] over `pieces`, the word-boundary pieces of `text`
/// with their offsets (`may_be_cjk`: whether `text` is not all ASCII, so
/// pieces may hold CJK or other non-ASCII letters).
fn walk<'t, F: FnMut(Piece<'_>)>(
    text: &'t str,
    pieces: impl Iterator<Item = (usize, &'t str)>,
    may_be_cjk: bool,
    out: &mut F,
) {
    // The current run of words joined by connectors: (start, end, words).
    let mut compound: Option<(usize, usize, usize)> = None;
    let mut pending_connector = false;
    // The current run of CJK characters (segmentation gives one a piece).
    let mut run: Vec<char> = Vec::new();
    let flush = |compound: &mut Option<(usize, usize, usize)>, out: &mut F| {
        if let Some((start, end, words)) = compound.take() {
            if words > 1 {
                let whole = &text[start..end];
                out(Piece::Term(&cut(whole.to_lowercase())));
                // Words joined by hyphens alone are also the word they
                // spell together ("de-stress" is "destress", "e-mail"
                // "email"), as people write them either way.
                if whole.chars().all(|c| c.is_alphabetic() || c == '-') {
                    out(Piece::Word(&whole.replace('-', "")));
                }
            }
        }
    };
    for (at, piece) in pieces {
        if may_be_cjk && piece.chars().any(is_cjk) {
            flush(&mut compound, out);
            pending_connector = false;
            for c in piece.chars() {
                if is_cjk(c) {
                    run.push(c);
                } else {
                    bigrams(&mut run, out);
                    let mut buf = [0u8; 4];
                    out(Piece::Word(c.encode_utf8(&mut buf)));
                }
            }
            continue;
        }
        bigrams(&mut run, out);
        let mut chars = piece.chars();
        let first = chars.next().unwrap_or(' ');
        let single = chars.next().is_none();
        let alphanumeric = if may_be_cjk {
            piece.chars().any(char::is_alphanumeric)
        } else {
            piece.bytes().any(|b| b.is_ascii_alphanumeric())
        };
        if alphanumeric {
            out(Piece::Word(piece));
            compound = match compound {
                Some((start, _, words)) if pending_connector => {
                    Some((start, at + piece.len(), words + 1))
                }
                _ => {
                    flush(&mut compound, out);
                    Some((at, at + piece.len(), 1))
                }
            };
            pending_connector = false;
        } else if single && is_connector(first) && compound.is_some() && !pending_connector {
            pending_connector = true;
        } else {
            flush(&mut compound, out);
            pending_connector = false;
        }
    }
    bigrams(&mut run, out);
    flush(&mut compound, out);
}

/// A piece of text that makes a term (see [`Terms::pieces`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    /// A word as written: its term is [`Terms::term_of_word`]'s.
    Word(&'a str),
    /// A term as it is indexed: words joined by connectors, lower-cased;
    /// a CJK bigram.
    Term(&'a str),
}

/// Words whose terms are remembered at most (the common words of a
/// session: most words of a text are among them, so most are not stemmed
/// again).
const MAX_CACHED_WORDS: usize = 50_000;

/// Splits texts into terms; holds the stemmer so it is made once, and the
/// terms of the words seen so far.
pub struct Terms {
    stemmer: Stemmer,
    cache: std::cell::RefCell<crate::HashMap<String, String>>,
}

impl Default for Terms {
    fn default() -> Self {
        Terms::new()
    }
}

impl std::fmt::Debug for Terms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Terms(english)")
    }
}

impl Terms {
    /// English terms.
    pub fn new() -> Self {
        Terms {
            stemmer: Stemmer::create(Algorithm::English),
            cache: Default::default(),
        }
    }

    /// The term of one word (not CJK): numbers as written, words
    /// lower-cased and stemmed; `None` when it has no letter or digit.
    pub fn term_of_word(&self, word: &str) -> Option<String> {
        if !word.chars().any(char::is_alphanumeric) {
            return None;
        }
        let lower = word.to_lowercase();
        Some(if lower.chars().all(char::is_alphabetic) {
            cut(self.stemmer.stem(&lower).into_owned())
        } else {
            cut(lower)
        })
    }

    /// [`Terms::term_of_word`], remembered.
    fn word(&self, word: &str, out: &mut dyn FnMut(&str)) {
        if let Some(term) = self.cache.borrow().get(word) {
            out(term);
            return;
        }
        let Some(term) = self.term_of_word(word) else {
            return;
        };
        out(&term);
        let mut cache = self.cache.borrow_mut();
        if cache.len() < MAX_CACHED_WORDS {
            cache.insert(word.to_string(), term);
        }
    }

    /// Gives each term of `text` to `out`, in order of appearance.
    pub fn each(&self, text: &str, out: &mut dyn FnMut(&str)) {
        self.pieces(text, &mut |piece| match piece {
            Piece::Word(word) => self.word(word, out),
            Piece::Term(term) => out(term),
        });
    }

    /// Gives each piece of `text` that makes a term to `out`, in order of
    /// appearance: words, whose term [`Terms::term_of_word`] gives (so a
    /// caller may remember it by the word), and terms made whole.
    pub fn pieces(&self, text: &str, out: &mut impl FnMut(Piece<'_>)) {
        // ASCII text (most of what agents record) is split without the
        // Unicode tables, into the same pieces.
        if text.is_ascii() {
            walk(text, crate::ascii::word_bound_indices(text), false, out);
        } else {
            walk(text, text.split_word_bound_indices(), true, out);
        }
    }

    /// The terms of a query: those of `text` but its function words ("when
    /// did she ..."), unless it has nothing else.
    pub fn of_query(&self, text: &str) -> Vec<String> {
        let all = self.of(text);
        let content: Vec<String> = all
            .iter()
            .filter(|t| !crate::stop::is_stop_word(t))
            .cloned()
            .collect();
        if content.is_empty() {
            all
        } else {
            content
        }
    }

    /// The terms of `text`.
    pub fn of(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.each(text, &mut |t| out.push(t.to_string()));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(text: &str) -> Vec<String> {
        Terms::new().of(text)
    }

    #[test]
    fn words_joined_by_hyphens_are_also_the_word_they_spell() {
        let t = terms("de-stress");
        assert!(
            t.contains(&"destress".to_string()) && t.contains(&"de-stress".to_string()),
            "{t:?}"
        );
        assert_eq!(terms("destress"), ["destress"]);
        // Not a path, a date or a version.
        assert!(!terms("2024-05-01").contains(&"20240501".to_string()));
        assert!(!terms("src/main-loop.rs").contains(&"srcmainlooprs".to_string()));
    }

    #[test]
    fn words_are_lower_cased_and_stemmed() {
        assert_eq!(terms("Running runners ran"), ["run", "runner", "ran"]);
        assert_eq!(terms("The CONNECTIONS"), ["the", "connect"]);
    }

    #[test]
    fn paths_identifiers_dates_and_numbers_stay_whole_beside_their_parts() {
        let t = terms("open src/session/log.rs now");
        assert!(t.contains(&"src/session/log.rs".to_string()), "{t:?}");
        assert!(t.contains(&"session".to_string()), "{t:?}");
        let t = terms("on 2024-05-01 at 3.14");
        assert!(t.contains(&"2024-05-01".to_string()), "{t:?}");
        assert!(t.contains(&"3.14".to_string()), "{t:?}");
        let t = terms("call fetch_user_profile(id)");
        assert!(t.contains(&"fetch_user_profile".to_string()), "{t:?}");
        let t = terms("mail ada@example.com");
        assert!(t.contains(&"ada@example.com".to_string()), "{t:?}");
    }

    #[test]
    fn punctuation_and_spaces_are_not_terms() {
        assert_eq!(terms("  -- ... !!! "), Vec::<String>::new());
        // A connector between spaced words does not join them.
        assert_eq!(terms("left - right"), ["left", "right"]);
        // Sentence ends do not make compounds.
        assert_eq!(terms("Done. Next"), ["done", "next"]);
    }

    #[test]
    fn cjk_runs_give_bigrams() {
        assert_eq!(terms("東京都"), ["東京", "京都"]);
        assert_eq!(terms("猫"), ["猫"]);
        let t = terms("会議は2024年");
        assert!(t.contains(&"会議".to_string()), "{t:?}");
        assert!(t.contains(&"2024".to_string()), "{t:?}");
    }

    #[test]
    fn long_terms_are_cut_on_a_character_boundary() {
        let long = "é".repeat(100);
        let t = terms(&long);
        assert_eq!(t.len(), 1);
        assert!(t[0].len() <= MAX_TERM_BYTES);
    }

    #[test]
    fn every_script_and_odd_input_is_handled() {
        for text in [
            "",
            "\u{0}\u{1}\u{fffd}",
            "Привет мир",
            "مرحبا بالعالم",
            "नमस्ते दुनिया",
            "😀😀 emoji",
            "a\u{301}\u{302}\u{303}",
            "/////",
            "a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z/a/b/c/d/e/f/g",
        ] {
            let t = terms(text);
            assert!(t
                .iter()
                .all(|term| !term.is_empty() && term.len() <= MAX_TERM_BYTES));
        }
        assert_eq!(terms("Привет мир").len(), 2);
    }
}
