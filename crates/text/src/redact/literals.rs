//! Double-quoted string literals in any text: where JSON (whole documents,
//! NDJSON lines, fragments in logs) has its strings and keys, so a key rule
//! can end at its value's end and a string's escaped content can be read.

/// A `"…"` literal on one line, with JSON escapes honoured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Literal {
    /// Byte offset of the opening quote.
    pub(crate) open: usize,
    /// Byte offset of the closing quote.
    pub(crate) close: usize,
    /// Whether the content holds a backslash escape.
    pub(crate) escaped: bool,
    /// Whether a `:` follows (after spaces or tabs): the literal is a key.
    pub(crate) key: bool,
}

impl Literal {
    /// The content between the quotes.
    pub(crate) fn content<'t>(&self, text: &'t str) -> &'t str {
        &text[self.open + 1..self.close]
    }
}

/// Every closed literal of `text`, in order. A quote with no closing quote
/// before the end of its line opens nothing (prose inches, stray quotes).
pub(crate) fn literals(text: &str) -> Vec<Literal> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(off) = b[i..].iter().position(|&c| c == b'"') {
        let open = i + off;
        let mut j = open + 1;
        let mut escaped = false;
        let mut close = None;
        while j < b.len() {
            match b[j] {
                b'"' => {
                    close = Some(j);
                    break;
                }
                b'\\' => {
                    escaped = true;
                    j += 2;
                }
                b'\n' => break,
                _ => j += 1,
            }
        }
        match close {
            Some(close) => {
                let after = b[close + 1..]
                    .iter()
                    .position(|&c| c != b' ' && c != b'\t')
                    .map(|p| b[close + 1 + p]);
                out.push(Literal {
                    open,
                    close,
                    escaped,
                    key: after == Some(b':'),
                });
                i = close + 1;
            }
            None => i = open + 1,
        }
    }
    out
}

/// The literal whose quotes enclose byte `pos`, if any.
pub(crate) fn enclosing(literals: &[Literal], pos: usize) -> Option<&Literal> {
    let i = literals.partition_point(|l| l.open < pos);
    let l = literals.get(i.checked_sub(1)?)?;
    (pos < l.close).then_some(l)
}

/// The JSON-escaped content of a literal, decoded, with `map[i]` the offset
/// in `raw` where decoded byte `i` came from (`map[decoded.len()] == raw.len()`).
/// Unknown escapes keep their character; lone surrogates become U+FFFD.
pub(crate) fn decode(raw: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(raw.len());
    let mut map = Vec::with_capacity(raw.len() + 1);
    let mut chars = raw.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let decoded = if c != '\\' {
            c
        } else {
            match chars.next() {
                None => '\\',
                Some((_, 'n')) => '\n',
                Some((_, 't')) => '\t',
                Some((_, 'r')) => '\r',
                Some((_, 'b')) => '\u{8}',
                Some((_, 'f')) => '\u{c}',
                Some((u_at, 'u')) => {
                    let (ch, used) = unicode_escape(&raw[u_at + 1..]);
                    for _ in 0..used {
                        chars.next();
                    }
                    ch
                }
                Some((_, other)) => other,
            }
        };
        for _ in 0..decoded.len_utf8() {
            map.push(at);
        }
        out.push(decoded);
    }
    map.push(raw.len());
    (out, map)
}

/// Reads the `XXXX` (and a following `\uXXXX` low surrogate) after `\u`;
/// returns the character and how many characters of `rest` it used.
fn unicode_escape(rest: &str) -> (char, usize) {
    let hex = |s: &str| {
        s.get(..4)
            .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|h| u32::from_str_radix(h, 16).ok())
    };
    let Some(hi) = hex(rest) else {
        return ('u', 0);
    };
    if (0xD800..0xDC00).contains(&hi) {
        if let Some(lo) = rest
            .get(4..6)
            .filter(|p| *p == "\\u")
            .and_then(|_| hex(&rest[6..]))
            .filter(|lo| (0xDC00..0xE000).contains(lo))
        {
            let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
            return (char::from_u32(c).unwrap_or('\u{FFFD}'), 10);
        }
    }
    (char::from_u32(hi).unwrap_or('\u{FFFD}'), 4)
}

/// `s` as the content of a JSON string (quotes and backslashes escaped).
pub(crate) fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_keys_values_and_skips_unclosed_quotes() {
        let t = r#"{"a\"b": "x\\", "k" : 1} 5" tall"#;
        let l = literals(t);
        assert_eq!(l.len(), 3);
        assert_eq!(l[0].content(t), r#"a\"b"#);
        assert!(l[0].key && l[0].escaped);
        assert_eq!(l[1].content(t), r"x\\");
        assert!(!l[1].key);
        assert!(l[2].key);
        assert_eq!(enclosing(&l, 3).map(|x| x.open), Some(1));
        assert_eq!(enclosing(&l, 0), None);
    }

    #[test]
    fn decodes_with_a_map_back_to_the_raw_text() {
        let raw = r#"pass\u0077ord \"é\" \ud83d\ude00 \ud800"#;
        let (d, map) = decode(raw);
        assert_eq!(d, "password \"é\" 😀 \u{FFFD}");
        assert_eq!(map.len(), d.len() + 1);
        assert_eq!(map[4], 4);
        assert_eq!(map[5], 10);
        assert_eq!(*map.last().unwrap(), raw.len());
        assert_eq!(escape(r#"a"b\c"#), r#"a\"b\\c"#);
    }
}
