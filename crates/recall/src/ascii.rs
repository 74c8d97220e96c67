//! Word boundaries of ASCII text without the Unicode tables: the pieces
//! `unicode_segmentation`'s `split_word_bound_indices` gives (UAX #29), for
//! text that is all ASCII, most of what agents record. The rules are UAX
//! #29's restricted to the ASCII classes; a property test compares the two.

/// The UAX #29 word-break class of an ASCII byte.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Letter,
    Numeric,
    ExtendNumLet,
    MidLetter,
    MidNum,
    MidNumLet,
    SingleQuote,
    Space,
    Cr,
    Lf,
    Newline,
    Other,
}

#[inline]
fn class(b: u8) -> Class {
    match b {
        b'a'..=b'z' | b'A'..=b'Z' => Class::Letter,
        b'0'..=b'9' => Class::Numeric,
        b'_' => Class::ExtendNumLet,
        b':' => Class::MidLetter,
        b',' | b';' => Class::MidNum,
        b'.' => Class::MidNumLet,
        b'\'' => Class::SingleQuote,
        b' ' => Class::Space,
        b'\r' => Class::Cr,
        b'\n' => Class::Lf,
        0x0B | 0x0C => Class::Newline,
        _ => Class::Other,
    }
}

/// `MidNumLetQ` and `MidLetter`: what joins two letters.
fn joins_letters(c: Class) -> bool {
    matches!(c, Class::MidLetter | Class::MidNumLet | Class::SingleQuote)
}

/// `MidNumLetQ` and `MidNum`: what joins two numbers.
fn joins_numbers(c: Class) -> bool {
    matches!(c, Class::MidNum | Class::MidNumLet | Class::SingleQuote)
}

/// Whether UAX #29 keeps the bytes at `i - 1` and `i` of `bytes` in one
/// piece (`i` from 1 to the last byte).
fn joined(bytes: &[u8], i: usize) -> bool {
    use Class::*;
    let prev = class(bytes[i - 1]);
    let cur = class(bytes[i]);
    let before = i.checked_sub(2).map(|j| class(bytes[j]));
    let after = bytes.get(i + 1).copied().map(class);
    match (prev, cur) {
        (Cr, Lf) => true,                                                    // WB3
        (Cr | Lf | Newline, _) | (_, Cr | Lf | Newline) => false,            // WB3a, WB3b
        (Space, Space) => true,                                              // WB3d
        (Letter, Letter) => true,                                            // WB5
        (Letter, c) if joins_letters(c) && after == Some(Letter) => true,    // WB6
        (c, Letter) if joins_letters(c) && before == Some(Letter) => true,   // WB7
        (Numeric, Numeric) | (Letter, Numeric) | (Numeric, Letter) => true,  // WB8-10
        (c, Numeric) if joins_numbers(c) && before == Some(Numeric) => true, // WB11
        (Numeric, c) if joins_numbers(c) && after == Some(Numeric) => true,  // WB12
        (Letter | Numeric | ExtendNumLet, ExtendNumLet) => true,             // WB13a
        (ExtendNumLet, Letter | Numeric) => true,                            // WB13b
        _ => false,                                                          // WB999
    }
}

/// The pieces of `text` (all ASCII) between word boundaries, each with its
/// byte offset.
pub(crate) fn word_bound_indices(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut i = 1;
    std::iter::from_fn(move || {
        if start >= bytes.len() {
            return None;
        }
        // Letters after letters (most of a text) first, then the rules.
        if bytes[start].is_ascii_alphabetic() {
            while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
                i += 1;
            }
        }
        // A space beside anything but a space is a boundary (WB3d joins
        // spaces alone; no ASCII byte is Extend or Format).
        while i < bytes.len() && (bytes[i - 1] == b' ') == (bytes[i] == b' ') && joined(bytes, i) {
            i += 1;
            while i < bytes.len()
                && bytes[i - 1].is_ascii_alphabetic()
                && bytes[i].is_ascii_alphabetic()
            {
                i += 1;
            }
        }
        let piece = (start, &text[start..i]);
        start = i;
        i += 1;
        Some(piece)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use unicode_segmentation::UnicodeSegmentation;

    fn unicode(text: &str) -> Vec<(usize, &str)> {
        text.split_word_bound_indices().collect()
    }

    #[test]
    fn pieces_are_those_of_uax_29() {
        for text in [
            "",
            "a",
            "hello world",
            "src/session/log.rs",
            "2024-05-01 12:00",
            "v1.2.3",
            "user@example.com",
            "e.g. it's 3,000.50 dollars",
            "a:b c_d __x__ 'quoted' don't",
            "line\r\nnext\n\nend",
            "tab\there",
            "  two  spaces  ",
            "x.",
            ".x",
            "1.",
            ",1",
            "a'b'c",
            "3'4",
            "_",
            "a_1_b",
            "#tag +1 -2",
        ] {
            assert_eq!(
                word_bound_indices(text).collect::<Vec<_>>(),
                unicode(text),
                "{text:?}"
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        /// On random ASCII of letters, digits and the joining punctuation,
        /// the pieces are UAX #29's.
        #[test]
        fn random_ascii_splits_as_uax_29(text in "[a-zA-Z0-9 '.,:;_\\-/@\\t\\r\\n\"#+!?()]{0,40}") {
            prop_assert_eq!(word_bound_indices(&text).collect::<Vec<_>>(), unicode(&text));
        }

        /// Any ASCII at all.
        #[test]
        fn any_ascii_splits_as_uax_29(bytes in proptest::collection::vec(0u8..128, 0..60)) {
            let text = String::from_utf8(bytes).unwrap_or_default();
            prop_assert_eq!(word_bound_indices(&text).collect::<Vec<_>>(), unicode(&text));
        }
    }
}
