//! The key rule: a secret-looking key and its value, in every text format.
//! A value ends where its format says (a JSON value's end, a closing quote,
//! whitespace after `=`, the end of a flow item or line after `:`), never
//! past the string the key is written in.

use std::borrow::Cow;

use regex::{Captures, Regex};

use super::keys::{is_jwt, is_placeholder, is_secret_key};
use super::literals::{decode, enclosing, Literal};
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
            Some(b'{' | b'[') | None => {}
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

/// Key-value hits of `re` over unquoted keys (`password=x`, `token: x`,
/// `{'secret': 'x'}`). Scanning resumes right after each value taken, so
/// `a=1 password=x` finds both. Matches inside an escaped literal are left
/// to the literal's own decoded scan.
pub(super) fn pattern_hits(re: &Regex, text: &str, literals: &[Literal]) -> Vec<Hit> {
    let mut hits = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        let Some(caps) = re.captures_at(text, pos) else {
            break;
        };
        let Some(whole) = caps.get(0) else { break };
        let key = caps.name("key").map_or(whole.start(), |k| k.start());
        let inside = enclosing(literals, key);
        if inside.is_some_and(|l| l.escaped) {
            pos = next_pos(text, whole.start(), whole.start());
            continue;
        }
        let limit = inside.map_or(text.len(), |l| l.close);
        let Some((start, end)) = value_span(text, &caps, limit) else {
            pos = next_pos(text, whole.start(), whole.end());
            continue;
        };
        pos = next_pos(text, whole.start(), end.max(start));
        let key = caps.name("key").map_or("", |k| k.as_str());
        let bare = caps.name("bare").is_some_and(|b| b.start() == start);
        // `type Credentials = "include" | "omit"` declares a type, not a value.
        let alias = text[..caps.name("key").map_or(whole.start(), |k| k.start())]
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
fn value_span(text: &str, caps: &Captures<'_>, limit: usize) -> Option<(usize, usize)> {
    if let Some(m) = caps.name("dq").or_else(|| caps.name("sq")) {
        return Some((m.start(), m.end().min(limit.max(m.start()))));
    }
    let bare = caps.name("bare")?;
    let sep = caps.name("sep").map_or("", |s| s.as_str());
    let raw = &text[bare.start()..bare.end().min(limit.max(bare.start()))];
    let key_start = caps.name("key").map_or(0, |k| k.start());
    // `=` values end at whitespace (log lines, env files); `:` values end a
    // flow item (`{a: 1, b: 2}`, `f(password: str)`) or run to the end of
    // the line (YAML).
    let cut = if sep != ":" {
        raw.find(char::is_whitespace).unwrap_or(raw.len())
    } else if in_flow(&text[..key_start]) {
        raw.find([',', '}', ']', ')', ';']).unwrap_or(raw.len())
    } else {
        raw.len()
    };
    let value = raw[..cut]
        .trim_end()
        .trim_end_matches([',', ';', '`', '"', '\'']);
    Some((bare.start(), bare.start() + value.len()))
}

/// Whether the text before a key ends inside a flow collection or an
/// argument list: its last non-blank character (quotes skipped) opens one
/// or separates items.
fn in_flow(before: &str) -> bool {
    before
        .trim_end_matches([' ', '\t', '\'', '"'])
        .ends_with(['{', '[', '(', ','])
}
