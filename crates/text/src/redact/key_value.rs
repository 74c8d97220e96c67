//! The key rule: a secret-looking key and its value, in every text format.
//! A value ends where its format says (a JSON value's end, a closing quote,
//! whitespace after `=`, the end of a flow item or line after `:`), never
//! past the string the key is written in.

use std::borrow::Cow;

use super::anchored::{Anchored, AtStarts, Groups, Matches};
use super::keys::{is_jwt, is_placeholder, is_secret_key};
use super::literals::{decode, enclosing, Literal};
use super::rules::run_before;
use super::Hit;

/// The rule id of every key-value hit.
const RULE: &str = "secret-key-value";

/// Values of JSON keys (`"password": …`, also with escaped key names) among
/// the `candidate` keys.
/// Strings and numbers are secrets; `null`, booleans, objects and arrays are
/// not (their members are keys of their own).
pub(super) fn quoted_key_hits(
    text: &str,
    literals: &[Literal],
    candidate: impl Fn(&Literal) -> bool,
) -> Vec<Hit> {
    let mut hits = Vec::new();
    for (i, key) in literals
        .iter()
        .enumerate()
        .filter(|(_, l)| l.key && candidate(l))
    {
        if !is_secret_key(&decoded(key, text)) {
            continue;
        }
        let colon = key.close + 1 + leading_blanks(&text[key.close + 1..]);
        let start = colon + 1 + leading_blanks(&text[colon + 1..]);
        let rest = &text[start..];
        let hit = |start, end, quoted: bool| Hit {
            rule: RULE,
            start,
            end,
            quote: if quoted { "\"" } else { "" }.to_string(),
        };
        match rest.as_bytes().first() {
            Some(b'"') => {
                let Some(value) = literals.get(i + 1).filter(|l| l.open == start) else {
                    continue;
                };
                if !is_placeholder(&decoded(value, text)) {
                    hits.push(hit(value.open + 1, value.close, false));
                }
            }
            Some(b'-' | b'0'..=b'9') => {
                let len = rest
                    .find(|c: char| !(c.is_ascii_digit() || "+-.eE".contains(c)))
                    .unwrap_or(rest.len());
                hits.push(hit(start, start + len, true));
            }
            // Every string a container under a secret key holds
            // (`"password": ["hunter2"]`, `"token": {"value": "…"}`).
            Some(b'{' | b'[') => {
                let end = container_end(text, start, literals);
                hits.extend(
                    literals
                        .iter()
                        .filter(|l| l.open > start && l.close < end && !l.key)
                        .filter(|l| !is_placeholder(&decoded(l, text)))
                        .map(|l| hit(l.open + 1, l.close, false)),
                );
                hits.extend(
                    container_numbers(text, start, end, literals)
                        .into_iter()
                        .map(|(s, e)| hit(s, e, true)),
                );
            }
            None => {}
            Some(_) => {
                let end = rest.find([',', '}', ']', '\n']).unwrap_or(rest.len());
                let value = rest[..end].trim_end();
                let value = value.strip_prefix('\'').unwrap_or(value);
                let value = value.strip_suffix('\'').unwrap_or(value);
                if !is_placeholder(value) {
                    let offset = rest[..end].find(value).unwrap_or(0);
                    hits.push(hit(start + offset, start + offset + value.len(), false));
                }
            }
        }
    }
    hits
}

/// Where the container (`{…}` or `[…]`) opening at byte `open` closes
/// (the text's end when it does not), stepping over string literals.
fn container_end(text: &str, open: usize, literals: &[Literal]) -> usize {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = open;
    let mut next_literal = literals.partition_point(|l| l.open < open);
    while i < bytes.len() {
        if let Some(l) = literals.get(next_literal).filter(|l| l.open == i) {
            i = l.close + 1;
            next_literal += 1;
            continue;
        }
        match bytes[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
        i += 1;
    }
    text.len()
}

/// The numbers among the values of the container `text[open..end]`
/// (outside its string literals): byte spans.
fn container_numbers(
    text: &str,
    open: usize,
    end: usize,
    literals: &[Literal],
) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut next_literal = literals.partition_point(|l| l.open < open);
    let mut after_separator = false;
    let mut i = open;
    while i < end {
        if let Some(l) = literals.get(next_literal).filter(|l| l.open == i) {
            i = l.close + 1;
            next_literal += 1;
            after_separator = false;
            continue;
        }
        let b = bytes[i];
        if after_separator && (b == b'-' || b.is_ascii_digit()) {
            let len = bytes[i..end]
                .iter()
                .take_while(|&&c| c.is_ascii_digit() || b"+-.eE".contains(&c))
                .count();
            out.push((i, i + len));
            i += len;
            after_separator = false;
            continue;
        }
        match b {
            b'[' | b',' | b':' => after_separator = true,
            b' ' | b'\t' | b'\n' | b'\r' => {}
            _ => after_separator = false,
        }
        i += 1;
    }
    out
}

/// Values of secret flags in argument lists (`["--password", "hunter2"]`):
/// a string literal naming a secret flag, then a comma, then the value's
/// string literal.
pub(super) fn flag_value_hits(text: &str, literals: &[Literal]) -> Vec<Hit> {
    literals
        .windows(2)
        .filter(|w| !w[0].key && !w[0].escaped && is_secret_flag(w[0].content(text)))
        .filter(|w| text[w[0].close + 1..w[1].open].trim() == ",")
        .filter(|w| {
            let value = w[1].content(text);
            !value.starts_with('-') && !is_placeholder(value)
        })
        .map(|w| Hit {
            rule: RULE,
            start: w[1].open + 1,
            end: w[1].close,
            quote: String::new(),
        })
        .collect()
}

/// Whether `arg` is a command-line flag naming a secret (`--password`,
/// `--api-key`, `-token`).
pub(crate) fn is_secret_flag(arg: &str) -> bool {
    let name = arg.trim_start_matches('-');
    arg.starts_with('-')
        && name.len() + 2 >= arg.len()
        && !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && is_secret_key(name)
}

/// How far back from a comparison its quoted literal is looked for.
const MAX_LITERAL: usize = 4096;

/// Characters of an unquoted key (`[A-Za-z0-9_.\-]`).
fn key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

/// Characters of a key compared with a literal (`[A-Za-z0-9_.]`).
fn compared_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.')
}

/// `regex-lite`'s `\s`.
fn space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ')
}

/// The runs of one class of bytes around successive positions of a text.
struct Runs<'t> {
    bytes: &'t [u8],
    class: fn(u8) -> bool,
    /// The last run found: the next position inside it reuses it, so many
    /// keywords in one long run cost one pass over it.
    last: Option<(usize, usize)>,
}

impl<'t> Runs<'t> {
    fn new(bytes: &'t [u8], class: fn(u8) -> bool) -> Runs<'t> {
        Runs {
            bytes,
            class,
            last: None,
        }
    }

    /// Where the run of the class around byte `p` starts and ends.
    fn around(&mut self, p: usize) -> (usize, usize) {
        if let Some((start, end)) = self.last.filter(|&(start, end)| start <= p && p < end) {
            return (start, end);
        }
        let class = self.class;
        let back = run_before(self.bytes, p, usize::MAX, class);
        let ahead = self.bytes[p..].iter().take_while(|&&b| class(b)).count();
        let run = (p - back, p + ahead);
        self.last = Some(run);
        run
    }
}

/// Whether a key ending at `end` is followed by what [`KEY_VALUE_PATTERN`]
/// needs there: `[index]`, `'` and blanks, each optional, then `:` or `=`.
///
/// [`KEY_VALUE_PATTERN`]: super::rules::KEY_VALUE_PATTERN
fn separator_follows(bytes: &[u8], mut end: usize) -> bool {
    if bytes.get(end) == Some(&b'[') {
        let digits = bytes[end + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if bytes.get(end + 1 + digits) == Some(&b']') {
            end += digits + 2;
        }
    }
    if bytes.get(end) == Some(&b'\'') {
        end += 1;
    }
    let blanks = bytes[end..]
        .iter()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count();
    matches!(bytes.get(end + blanks), Some(b':' | b'='))
}

/// Whether a key ending at `end` is followed by spaces and `==` or `!=`.
fn comparison_follows(bytes: &[u8], end: usize) -> bool {
    let spaces = bytes[end..].iter().take_while(|&&b| space(b)).count();
    matches!(
        bytes.get(end + spaces..end + spaces + 2),
        Some(b"==" | b"!=")
    )
}

/// The opening quotes of the literals that could be compared with a key
/// starting at `key` (`"…" == key`): quotes like the one closing the
/// literal before the comparison, on its line.
fn quotes_before_comparison(bytes: &[u8], key: usize, out: &mut Vec<usize>) {
    let mut end = key - bytes[..key].iter().rev().take_while(|&&b| space(b)).count();
    if !(bytes[..end].ends_with(b"==") || bytes[..end].ends_with(b"!=")) {
        return;
    }
    let op = bytes[..end]
        .iter()
        .rev()
        .take(3)
        .take_while(|&&b| b == b'=' || b == b'!')
        .count();
    end -= op;
    end -= bytes[..end].iter().rev().take_while(|&&b| space(b)).count();
    let Some(&quote) = bytes[..end].last().filter(|&&q| q == b'"' || q == b'\'') else {
        return;
    };
    let close = end - 1;
    let from = close.saturating_sub(MAX_LITERAL);
    let line = bytes[from..close]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(from, |n| from + n + 1);
    out.extend((line..close).filter(|&i| bytes[i] == quote));
}

/// Hits of the three key patterns (`password=x`, `token == "x"`,
/// `"x" == token`) for the key keywords found at `keywords`. Each pattern
/// is tried only where a key holding one of them starts and the bytes
/// around it fit the pattern.
pub(super) fn key_value_hits(
    patterns: &[Anchored; 3],
    text: &str,
    keywords: &[usize],
    literals: &[Literal],
) -> Vec<Hit> {
    let bytes = text.as_bytes();
    let mut starts: [Vec<usize>; 3] = Default::default();
    let (mut keys, mut compared_keys) = (
        Runs::new(bytes, key_byte),
        Runs::new(bytes, compared_key_byte),
    );
    for &p in keywords {
        let (key, end) = keys.around(p);
        if separator_follows(bytes, end) {
            starts[0].push(key);
        }
        let (key, end) = compared_keys.around(p);
        if comparison_follows(bytes, end) {
            starts[1].push(key);
        }
        quotes_before_comparison(bytes, key, &mut starts[2]);
    }
    patterns
        .iter()
        .zip(starts)
        .flat_map(|(re, starts)| {
            let names = Names::of(re);
            pattern_hits(AtStarts::new(re, starts), &names, text, literals)
        })
        .collect()
}

/// Key-value hits among `matches` of one key pattern (whose groups are
/// `names`) over unquoted keys (`password=x`, `token: x`, `{'secret': 'x'}`).
/// Matching resumes right after each value taken, so `a=1 password=x`
/// finds both. Matches inside an escaped literal are left to the literal's
/// own decoded scan.
pub(super) fn pattern_hits(
    mut matches: impl Matches,
    names: &Names,
    text: &str,
    literals: &[Literal],
) -> Vec<Hit> {
    let span = |g: &Groups, i: Option<usize>| i.and_then(|i| g.get(i));
    let mut hits = Vec::new();
    let mut pos = 0;
    while let Some(caps) = matches.next_from(text, pos) {
        let whole = caps.whole();
        let key_span = span(&caps, names.key).unwrap_or((whole.0, whole.0));
        let inside = enclosing(literals, key_span.0);
        if inside.is_some_and(|l| l.escaped) {
            pos = next_pos(text, whole.0, whole.0);
            continue;
        }
        let limit = inside.map_or(text.len(), |l| l.close);
        let Some((start, end)) = value_span(text, &caps, names, limit) else {
            pos = next_pos(text, whole.0, whole.1);
            continue;
        };
        pos = next_pos(text, whole.0, end.max(start));
        let key = &text[key_span.0..key_span.1];
        let bare = span(&caps, names.bare).is_some_and(|b| b.0 == start);
        // `type Credentials = "include" | "omit"` declares a type, not a value.
        let alias = text[..key_span.0]
            .trim_end()
            .rsplit(|c: char| !c.is_ascii_alphanumeric())
            .next()
            .is_some_and(|w| w == "type");
        let value = text.get(start..end).unwrap_or("");
        let not_a_secret = is_placeholder(value)
            || alias
            || value.eq_ignore_ascii_case(key)
            || (bare && is_code(value, text.get(end..).unwrap_or("")));
        if start < end && is_secret_key(key) && !not_a_secret {
            hits.push(Hit {
                rule: RULE,
                start,
                end,
                quote: String::new(),
            });
        }
    }
    hits
}

/// The indices of a key pattern's named groups.
pub(super) struct Names {
    key: Option<usize>,
    sep: Option<usize>,
    dq: Option<usize>,
    sq: Option<usize>,
    bare: Option<usize>,
}

impl Names {
    /// The groups of `pattern`.
    pub(super) fn of(pattern: &Anchored) -> Names {
        Names {
            key: pattern.group("key"),
            sep: pattern.group("sep"),
            dq: pattern.group("dq"),
            sq: pattern.group("sq"),
            bare: pattern.group("bare"),
        }
    }
}

/// Words that start code, not a value (`x = new Y()`, `get: async () =>`).
const CODE_WORDS: &[&str] = &[
    "new", "await", "async", "function", "lambda", "yield", "return",
];

/// Whether an unquoted value (followed by `after`) is code rather than a
/// literal: an expression that starts with a [`CODE_WORDS`] word, a dotted
/// reference or call (`self.settings.api_token`, `identity.from(`), a type
/// union (`KeyLike | null`), a type in a declaration (`privateKey: CryptoKey;`,
/// `f(credential: Credential)`), a hex constant (`PASS_DEPTH: 0x0B95;`) or
/// a small integer (`LastToken = 166`). Secrets in code are quoted
/// strings, which this never sees.
fn is_code(value: &str, after: &str) -> bool {
    let first = value
        .split(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap_or("");
    if CODE_WORDS.contains(&first)
        && value[first.len()..]
            .chars()
            .next()
            .is_none_or(|c| !c.is_ascii_alphanumeric())
    {
        return true;
    }
    // `LastToken = 166`: a small integer is a constant, not a secret.
    if value.len() < 6 && value.chars().all(|c| c.is_ascii_digit()) {
        return true;
    }
    let head = value.split('(').next().unwrap_or(value);
    let identifier = |w: &str| {
        !w.is_empty()
            && w.len() <= 40
            && w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '$')
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
    };
    let segments: Vec<&str> = head.split('.').collect();
    if segments.len() >= 2 && segments.iter().all(|w| identifier(w)) && !is_jwt(head) {
        return true;
    }
    let declared = after
        .trim_start()
        .starts_with([';', ')', '>', '|', '=', ','])
        || after.starts_with(['[', '<'])
        || value.contains(['[', '<']);
    // `KeyObject`, `Api.Key`, `Promise<Key>`, `Key[]`: a type's name.
    let type_name = |t: &str| {
        let name = t.split(['<', '[']).next().unwrap_or(t).trim();
        name.starts_with(|c: char| c.is_ascii_uppercase())
            && name.chars().any(|c| c.is_ascii_lowercase())
            && name.split('.').all(identifier)
    };
    // `KeyLike | SignKeyInput`, `Api.Key | null`: a union or intersection.
    let parts: Vec<&str> = value.split(['|', '&']).map(str::trim).collect();
    if parts.len() >= 2
        && parts.iter().any(|t| type_name(t))
        && parts
            .iter()
            .all(|t| type_name(t) || matches!(*t, "null" | "undefined" | "string" | "number"))
    {
        return true;
    }
    let hex = value.len() <= 10
        && value
            .strip_prefix("0x")
            .is_some_and(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()));
    declared && (type_name(value) || hex)
}

/// A literal's content with its escapes decoded (borrowed when it has none).
fn decoded<'t>(literal: &Literal, text: &'t str) -> Cow<'t, str> {
    let raw = literal.content(text);
    if literal.escaped {
        Cow::Owned(decode(raw).0)
    } else {
        Cow::Borrowed(raw)
    }
}

/// Spaces and tabs at the start of `s`, in bytes.
fn leading_blanks(s: &str) -> usize {
    s.len() - s.trim_start_matches([' ', '\t']).len()
}

/// Where to resume: past `end`, and always past `start` (no empty loops).
fn next_pos(text: &str, start: usize, end: usize) -> usize {
    let mut p = end.max(start + 1);
    while p < text.len() && !text.is_char_boundary(p) {
        p += 1;
    }
    p
}

/// The span of the value in a key-value match, cut at `limit` (the end of
/// the string the key is written in).
fn value_span(text: &str, caps: &Groups, names: &Names, limit: usize) -> Option<(usize, usize)> {
    let span = |i: Option<usize>| i.and_then(|i| caps.get(i));
    if let Some((s, e)) = span(names.dq).or_else(|| span(names.sq)) {
        // A compared literal (no separator: `"…" == password`) whose
        // content starts the way the text between two JSON strings does
        // (`":1,"==password"`) is that text, not a literal: in JSON a `=`
        // never follows a closing quote.
        if names.sep.is_none() && text[s..e].trim_start().starts_with([':', ',', '}', ']']) {
            return None;
        }
        return Some((s, e.min(limit.max(s))));
    }
    let (bare_start, bare_end) = span(names.bare)?;
    let sep = span(names.sep).map_or("", |(s, e)| &text[s..e]);
    let raw = &text[bare_start..bare_end.min(limit.max(bare_start))];
    let key_start = span(names.key).map_or(0, |k| k.0);
    // `=` values end at whitespace (log lines, env files); `:` values end a
    // flow item (`{a: 1, b: 2}`, `f(password: str)`) or run to the end of
    // the line (YAML).
    let before = &text[..key_start];
    let cut = if sep != ":" {
        // A URL query's value ends at the next parameter.
        let query = before.ends_with(['?', '&']);
        raw.find(|c: char| c.is_whitespace() || (query && (c == '&' || c == '#')))
            .unwrap_or(raw.len())
    } else if before.ends_with("://") {
        // URL user info (`https://x-access-token:ghs_…@github.com`).
        raw.find(|c: char| c.is_whitespace() || c == '@' || c == '/')
            .unwrap_or(raw.len())
    } else if in_flow(before) {
        raw.find([',', '}', ']', ')', ';']).unwrap_or(raw.len())
    } else {
        raw.len()
    };
    // A key written inside quotes (`-H 'X-API-Key: …'`) ends its value at
    // the closing quote.
    let cut = match before.chars().next_back() {
        Some(q @ ('\'' | '"')) => raw[..cut].find(q).unwrap_or(cut),
        _ => cut,
    };
    let value = raw[..cut]
        .trim_end()
        .trim_end_matches([',', ';', '`', '"', '\'']);
    Some((bare_start, bare_start + value.len()))
}

/// Whether the text before a key ends inside a flow collection or an
/// argument list: its last non-blank character (quotes skipped) opens one
/// or separates items.
fn in_flow(before: &str) -> bool {
    before
        .trim_end_matches([' ', '\t', '\'', '"'])
        .ends_with(['{', '[', '(', ','])
}
