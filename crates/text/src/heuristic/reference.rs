//! The heuristic's definition, run by run and byte by byte, as the
//! counter had it before it counted 64 bytes at a time: the tests' oracle
//! for [`super::heuristic_milli`].

use proptest::prelude::*;

use super::{
    CAPS_PER_CHAR, CJK_CHAR, CJK_PUNCT_CHAR, LINE_BREAK_RUN, LONG_WORD_PER_CHAR, OTHER_CHAR,
    OTHER_LETTER_PER_CHAR, OTHER_LETTER_RUN, PUNCT_RUN, PUNCT_RUN_PER_CHAR, SHORT_WORD_MILLI_CHARS,
    SINGLE_PUNCT, WORD,
};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Letter,
    Digit,
    Space,
    LineBreak,
    Punct,
    Cjk,
    CjkPunct,
    OtherLetter,
    Other,
}

/// The class of a non-ASCII character (ASCII goes through [`ASCII_CLASS`]),
/// as the counter has it.
fn classify(c: char) -> Class {
    match super::classify(c) {
        super::Class::Cjk => Class::Cjk,
        super::Class::CjkPunct => Class::CjkPunct,
        super::Class::OtherLetter => Class::OtherLetter,
        super::Class::Whitespace => Class::LineBreak,
        super::Class::Other => Class::Other,
    }
}

/// The class of every ASCII byte.
const ASCII_CLASS: [Class; 128] = {
    let mut table = [Class::Punct; 128];
    let mut b = 0;
    while b < 128 {
        table[b] = match b as u8 {
            b'a'..=b'z' | b'A'..=b'Z' => Class::Letter,
            b'0'..=b'9' => Class::Digit,
            b' ' => Class::Space,
            b'\n' | b'\r' | b'\t' => Class::LineBreak,
            0..=31 | 127 => Class::Other,
            _ => Class::Punct,
        };
        b += 1;
    }
    table
};

/// Tokens of `text` in thousandths of a token. ASCII is scanned byte by
/// byte with a class table; only non-ASCII characters are decoded.
pub(super) fn count_milli(text: &str) -> u64 {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let ascii_class = |i: usize| -> Option<Class> {
        bytes
            .get(i)
            .filter(|b| b.is_ascii())
            .map(|&b| ASCII_CLASS[b as usize])
    };
    let mut total = 0u64;
    let mut i = 0;
    while i < n {
        let start = i;
        if let Some(class) = ascii_class(i) {
            let first = bytes[i];
            let mut same_char = true;
            i += 1;
            while ascii_class(i) == Some(class) {
                same_char &= bytes[i] == first;
                i += 1;
            }
            let run = (i - start) as u64;
            total += match class {
                Class::Letter => word_cost(&bytes[start..i]),
                Class::Digit => run.div_ceil(3) * WORD,
                Class::Space if run > 1 => WORD,
                Class::Space => 0,
                Class::LineBreak => LINE_BREAK_RUN,
                Class::Punct if run == 1 => SINGLE_PUNCT,
                Class::Punct if run > 3 && same_char => PUNCT_RUN,
                Class::Punct => PUNCT_RUN + (run - 1) * PUNCT_RUN_PER_CHAR,
                _ => run * OTHER_CHAR,
            };
            continue;
        }
        // A run of non-ASCII characters of one class.
        let mut chars = text[start..].chars();
        let Some(c) = chars.next() else { break };
        let class = classify(c);
        i += c.len_utf8();
        let mut run = 1u64;
        for d in chars {
            if d.is_ascii() || classify(d) != class {
                break;
            }
            i += d.len_utf8();
            run += 1;
        }
        total += match class {
            Class::Cjk => run * CJK_CHAR,
            Class::CjkPunct => run * CJK_PUNCT_CHAR,
            Class::OtherLetter => OTHER_LETTER_RUN + run * OTHER_LETTER_PER_CHAR,
            Class::LineBreak => LINE_BREAK_RUN,
            _ => run * OTHER_CHAR,
        };
    }
    total
}

/// Cost of a run of ASCII letters, split into camelCase and ALLCAPS parts.
fn word_cost(word: &[u8]) -> u64 {
    let n = word.len();
    let mut total = 0;
    let mut j = 0;
    while j < n {
        if word[j].is_ascii_uppercase() {
            let mut k = j;
            while k < n && word[k].is_ascii_uppercase() {
                k += 1;
            }
            if k < n && word[k].is_ascii_lowercase() {
                if k - j > 1 {
                    total += caps_cost(k - 1 - j);
                }
                let mut m = k;
                while m < n && word[m].is_ascii_lowercase() {
                    m += 1;
                }
                total += part_cost(m - (k - 1));
                j = m;
            } else {
                total += caps_cost(k - j);
                j = k;
            }
        } else {
            let mut m = j;
            while m < n && word[m].is_ascii_lowercase() {
                m += 1;
            }
            total += part_cost(m - j);
            j = m;
        }
    }
    total
}

fn caps_cost(len: usize) -> u64 {
    WORD + (len as u64).saturating_sub(1) * CAPS_PER_CHAR
}

fn part_cost(len: usize) -> u64 {
    WORD + ((len as u64) * 1000).saturating_sub(SHORT_WORD_MILLI_CHARS) * LONG_WORD_PER_CHAR / 1000
}

/// Text made of pieces that exercise every charge: words in every case,
/// digit runs, space and punctuation runs of one or several characters,
/// control characters, CJK and other scripts, across block edges.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z]{1,12}",
        "[A-Z]{1,6}[a-z]{0,8}",
        "[a-zA-Z]{1,20}",
        "[0-9]{1,12}",
        " {1,4}",
        "[\\n\\r\\t]{1,3}",
        "[-=.*#]{1,8}",
        "[!-/:-@\\[-`{-~]{1,5}",
        "[\\x00-\\x1f\\x7f]{1,2}",
        "[日本語のテキスト。、]{1,4}",
        "[é ñ ü д ж \\u{a0}\\u{2003}😀]{1,4}",
        "[a-zA-Z0-9 _.,:;{}\\[\\]\"'/\\n-]{1,90}",
        "[A-Za-z0-9+/=]{20,90}",
        "[0-9a-f]{28,70}",
        "[\u{1100}-\u{11ff}\u{3000}\u{3130}-\u{318f}\u{ac00}\u{ff00}-\u{ffef}\u{2028}]{1,3}",
    ];
    proptest::collection::vec(piece, 0..60).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn blocks_count_exactly_as_runs(text in text()) {
        prop_assert_eq!(super::heuristic_milli(&text), count_milli(&text));
        prop_assert_eq!(super::heuristic_milli_utf8(text.as_bytes()), Some(count_milli(&text)));
    }

    /// The shape gathered while counting is the byte-by-byte definition's,
    /// and the count is the same as without it.
    #[test]
    fn counting_shapes_exactly_as_the_definition(text in text()) {
        prop_assert_eq!(
            super::heuristic_milli_shaped(&text),
            (count_milli(&text), super::text_shape(&text))
        );
    }

    /// Bytes checked as they are counted: a count exactly when they are
    /// UTF-8 (text with bytes spliced in, often splitting a character or
    /// leaving a stray continuation or lead byte).
    #[test]
    fn bytes_count_when_and_only_when_they_are_utf8(
        text in text(),
        splices in proptest::collection::vec((any::<prop::sample::Index>(), proptest::collection::vec(any::<u8>(), 0..4)), 0..3),
    ) {
        let mut bytes = text.into_bytes();
        for (at, spliced) in splices {
            let at = at.index(bytes.len() + 1);
            bytes.splice(at..at, spliced);
        }
        let expected = std::str::from_utf8(&bytes).ok().map(count_milli);
        prop_assert_eq!(super::heuristic_milli_utf8(&bytes), expected);
    }
}

#[test]
fn long_runs_and_block_edges_count_exactly_as_runs() {
    for n in [1, 3, 62, 63, 64, 65, 127, 128, 129, 200] {
        for unit in [
            "-", "a", "A", "7", " ", "\n", "ab", "aB", "AAb", ".,", "\u{1}",
        ] {
            let text = unit.repeat(n);
            assert_eq!(
                super::heuristic_milli(&text),
                count_milli(&text),
                "{unit:?} x {n}"
            );
            let text = format!("x{}é{}", unit.repeat(n), unit.repeat(n));
            assert_eq!(
                super::heuristic_milli(&text),
                count_milli(&text),
                "{unit:?} x {n}, split"
            );
        }
    }
}

#[test]
fn dense_runs_across_block_edges_shape_as_the_definition() {
    // Runs of 31 to 33 bytes (and much longer) with 2 or 3 digits, placed
    // at every offset of a block, alone, between words, against a
    // character beyond ASCII, and at the end.
    let mut texts = Vec::new();
    for len in [1, 2, 31, 32, 33, 63, 64, 65, 100, 130, 200] {
        for digits in [0, 2, 3, 40] {
            let run: String = (0..len)
                .map(|i| match i {
                    _ if i < digits.min(len) => char::from(b'0' + (i % 10) as u8),
                    _ if i % 7 == 3 => '+',
                    _ if i % 11 == 5 => '/',
                    _ if i % 13 == 6 => '=',
                    _ => 'q',
                })
                .collect();
            for offset in 0..70 {
                let pad = "a".repeat(offset);
                texts.push(format!("{pad} {run}"));
                texts.push(format!("{pad}.{run}.{pad}"));
                texts.push(format!("{pad}é{run}日{run}"));
                texts.push(format!("{}{run}\n{run} {run}", " ".repeat(offset)));
            }
        }
    }
    texts.push("x".into());
    texts.push("é".into());
    texts.push(String::new());
    for text in &texts {
        assert_eq!(
            super::heuristic_milli_shaped(text),
            (count_milli(text), super::text_shape(text)),
            "{text:?}"
        );
    }
    let dense = super::text_shape(&format!("a {} b", "7".repeat(40)));
    assert_eq!((dense.dense, dense.visible, dense.len), (40, 42, 44));
    let sparse = super::text_shape(&format!("{}12", "q".repeat(40)));
    assert_eq!(sparse.dense, 0, "two digits are not dense");
    let cjk = super::text_shape("日本 語\u{3000}x");
    assert_eq!((cjk.visible, cjk.cjk), (4, 3), "U+3000 is whitespace");
}

#[test]
fn ascii_len_is_the_ascii_prefix() {
    for len in 0..70 {
        for at in 0..=len {
            let mut bytes = vec![b'a'; len];
            if at < len {
                bytes[at] = 0x80 | (at as u8);
            }
            assert_eq!(super::ascii_len(&bytes), at, "{len} bytes, high at {at}");
        }
    }
}

#[test]
fn part_costs_match_the_long_part_formula() {
    // ascii.rs charges a part of n >= 7 letters 172 (n - 6) - 80 beyond a word.
    for n in 1..300u64 {
        let by_formula = if n > 6 { 172 * (n - 6) - 80 } else { 0 };
        assert_eq!(part_cost(n as usize) - WORD, by_formula, "{n} letters");
    }
}

#[test]
fn real_samples_count_exactly_as_runs() {
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("../../../../tests/fixtures/token_counts.json")).unwrap();
    let samples = fixture["samples"].as_array().unwrap();
    assert!(samples.len() > 200);
    for s in samples {
        let text = s["text"].as_str().unwrap();
        assert_eq!(super::heuristic_milli(text), count_milli(text), "{text:?}");
    }
}
