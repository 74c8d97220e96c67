//! The redaction rules: one pattern per credential format, each with the
//! keywords that must occur in every match and where a match starts
//! relative to them.
//!
//! A rule never scans the whole text: it is tried, anchored, only at the
//! starts its keywords give (see [`Start`]), so text without keywords costs
//! one keyword scan and text with many costs a few bytes per keyword. For
//! that to find exactly what a scan of the whole text would, every match of
//! a rule must contain one of its keywords at a place its `start` names.

/// Where a rule's match may start, given a keyword found at byte `p`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Start {
    /// `n` bytes before the keyword (0: at it), or at the text's start when
    /// the keyword is closer to it than that.
    Before(usize),
    /// `min..=max` bytes before the keyword, over bytes of `class` only:
    /// each such position is tried, leftmost first (when the pattern starts
    /// with `\b`, only those after a non-word byte).
    Span {
        /// The bytes between a match's start and the keyword.
        class: fn(u8) -> bool,
        /// The fewest bytes between them.
        min: usize,
        /// The most bytes between them.
        max: usize,
    },
}

/// A credential pattern.
pub(crate) struct Rule {
    /// Stable rule id, used in replacements (`[REDACTED:<id>]`) and findings.
    pub(crate) id: &'static str,
    /// Keywords, each a substring of every match (in this case, unless the
    /// pattern starts with `(?i)`).
    pub(crate) keywords: &'static [&'static str],
    /// Where a match starts relative to a keyword.
    pub(crate) start: Start,
    /// A cheap test of the bytes at a keyword that every match passes,
    /// run before the pattern (`None`: always try the pattern).
    pub(crate) near: Option<fn(&[u8], usize) -> bool>,
    /// The capture group holding the secret (0: the whole match).
    pub(crate) group: usize,
    /// The pattern (`regex-lite` syntax: linear time, no backtracking).
    pub(crate) pattern: &'static str,
}

/// How many bytes of `class` end at byte `p` of `bytes` (at most `max`).
pub(crate) fn run_before(bytes: &[u8], p: usize, max: usize, class: fn(u8) -> bool) -> usize {
    bytes[..p]
        .iter()
        .rev()
        .take(max)
        .take_while(|&&b| class(b))
        .count()
}

/// Whether `b` is a word byte for `\b` (`[A-Za-z0-9_]`, ASCII as in
/// `regex-lite`).
pub(crate) fn word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Characters of a token (`[A-Za-z0-9_-]`).
fn token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Characters of a URL scheme (`[A-Za-z0-9+.-]`).
fn scheme_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-')
}

/// A Discord token's middle part: six token characters between two dots.
fn dot_token_dot(text: &[u8], p: usize) -> bool {
    text.get(p + 1..p + 8)
        .is_some_and(|w| w[..6].iter().all(|&b| token_byte(b)) && w[6] == b'.')
}

/// URL credentials: an `@` ends the authority after `://`, before any
/// whitespace, `/` or quote.
fn authority_with_at(text: &[u8], p: usize) -> bool {
    text.get(p + 3..)
        .and_then(|rest| {
            rest.iter()
                .find(|&&b| b.is_ascii_whitespace() || matches!(b, b'/' | b'"' | b'\'' | b'@'))
        })
        .is_some_and(|&b| b == b'@')
}

/// The id of the PEM private-key rule, which runs through
/// [`super::pem::PemMatches`] rather than its pattern (the same matches,
/// in linear time).
pub(crate) const PEM_RULE: &str = "pem-private-key";

/// Every rule, most specific first (on overlapping matches the earlier,
/// longer one wins).
pub(crate) const RULES: &[Rule] = &[
    Rule {
        id: PEM_RULE,
        keywords: &["-----BEGIN"],
        start: Start::Before(0),
        near: None,
        group: 0,
        // Up to its END line, or (cut off) over every base64 line that follows.
        // A key's body never holds a `"`, so a match never leaves the JSON
        // string it is written in.
        pattern: r#"-----BEGIN[A-Z ]*PRIVATE KEY(?: BLOCK)?-----(?:[^"]*?-----END[A-Z ]*PRIVATE KEY(?: BLOCK)?-----|(?:(?:\r?\n|\\r?\\n)+(?:[ \t]*[A-Za-z0-9+/=]{16,}|[A-Za-z-]+:[^\n\\"]*))*)"#,
    },
    Rule {
        id: "anthropic-api-key",
        keywords: &["sk-ant-"],
        start: Start::Before(0),
        near: None,
        group: 0,
        pattern: r"\bsk-ant-[a-z]{2,8}\d{2}-[A-Za-z0-9_-]{20,}",
    },
    Rule {
        id: "openai-api-key",
        keywords: &["sk-"],
        start: Start::Before(0),
        near: None,
        group: 0,
        pattern: r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}",
    },
    Rule {
        id: "github-token",
        keywords: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        start: Start::Before(0),
        near: None,
        group: 0,
        pattern: r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b",
    },
    Rule {
        id: "github-fine-grained-token",
        keywords: &["github_pat_"],
        start: Start::Before(0),
        near: None,
        group: 0,
        pattern: r"\bgithub_pat_[A-Za-z0-9_]{22,255}",
    },
    Rule {
        id: "gitlab-token",
        keywords: &[
            "glpat-",
            "gldt-",
            "glsoat-",
            "glrt-",
            "glcbt-",
            "glimt-",
            "glptt-",
            "gloas-",
            "GR1348941",
        ],
        start: Start::Before(0),
        near: None,
        group: 0,
        pattern: r"\b(?:(?:glpat|gldt|glsoat|glrt|glcbt|glimt|glptt|gloas)-|GR1348941)[A-Za-z0-9_-]{20,}",
    },
    Rule {
        id: "aws-access-key-id",
        keywords: &["AKIA", "ASIA", "ABIA", "ACCA"],
        start: Start::Before(0),
        near: None,
        group: 0,
        pattern: r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
    },
    Rule {
        id: "google-api-key",
        keywords: &["AIza"],
        start: Start::Before(0),
        near: None,
        group: 0,
        pattern: r"\bAIza[0-9A-Za-z_-]{35}",
    },
    Rule {
        id: "slack-token",
        keywords: &["xox"],
        start: Start::Before(0),
        near: None,
        group: 0,
        pattern: r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
    },
    Rule {
        id: "slack-webhook",
        keywords: &["hooks.slack.com"],
        start: Start::Before("https://".len()),
        near: None,
        group: 0,
        pattern: r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+",
    },
    Rule {
        id: "stripe-key",
        keywords: &["_live_", "_test_"],
        start: Start::Before("sk".len()),
        near: None,
        group: 0,
        pattern: r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",
    },
    Rule {
        id: "sendgrid-api-key",
        keywords: &["SG."],
        start: Start::Before(0),
        near: None,
        group: 0,
        pattern: r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}",
    },
    Rule {
        id: "npm-token",
        keywords: &["npm_"],
        start: Start::Before(0),
        near: None,
        group: 0,
        pattern: r"\bnpm_[A-Za-z0-9]{36}\b",
    },
    Rule {
        id: "pypi-token",
        keywords: &["pypi-"],
        start: Start::Before(0),
        near: None,
        group: 0,
        pattern: r"\bpypi-AgE[A-Za-z0-9_-]{50,}",
    },
    Rule {
        id: "huggingface-token",
        keywords: &["hf_"],
        start: Start::Before(0),
        near: None,
        group: 0,
        pattern: r"\bhf_[A-Za-z0-9]{34,}\b",
    },
    Rule {
        id: "twilio-key",
        // API key SIDs. Account SIDs (`AC…`) identify an account, like a
        // user name, and appear in prose and URLs: not redacted.
        keywords: &["SK"],
        start: Start::Before(0),
        near: None,
        group: 0,
        pattern: r"\bSK[0-9a-fA-Fx]{32}\b",
    },
    Rule {
        id: "telegram-bot-token",
        keywords: &[":AA"],
        start: Start::Span {
            class: |b| b.is_ascii_digit(),
            min: 8,
            max: 10,
        },
        near: None,
        group: 0,
        pattern: r"\b\d{8,10}:AA[0-9A-Za-z_-]{32,33}\b",
    },
    Rule {
        id: "discord-bot-token",
        keywords: &["."],
        start: Start::Span {
            class: token_byte,
            min: 24,
            max: 26,
        },
        near: Some(dot_token_dot),
        group: 0,
        pattern: r"\b[MNOA][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}\b",
    },
    Rule {
        id: "artifactory-token",
        keywords: &["AKC", "AP"],
        start: Start::Before(1),
        near: None,
        group: 1,
        pattern: r#"(?:^|[\s=:"'])(AKC[A-Za-z0-9]{10,}|AP[0-9A-F][A-Za-z0-9]{8,})"#,
    },
    Rule {
        id: "jwt",
        keywords: &["eyJ"],
        start: Start::Before(0),
        near: None,
        group: 0,
        pattern: r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]{10,})?",
    },
    Rule {
        id: "authorization-header",
        keywords: &["authorization"],
        start: Start::Before(0),
        near: None,
        group: 1,
        pattern: r#"(?i)authorization["']?\s*[:=]\s*["']?(?:bearer|basic|token|digest|apikey)\s+([A-Za-z0-9._~+/=-]{6,})"#,
    },
    Rule {
        id: "bearer-token",
        keywords: &["bearer"],
        start: Start::Before(0),
        near: None,
        group: 1,
        pattern: r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)",
    },
    Rule {
        id: "basic-auth-flag",
        keywords: &["-u", "--user"],
        start: Start::Before(1),
        near: None,
        group: 1,
        pattern: r#"(?:\s-u|\s--user)\s+["']?[^\s:"']+:([^\s"']+)"#,
    },
    Rule {
        id: "url-credentials",
        keywords: &["://"],
        // Runs of scheme bytes end at every `://`, so following them back
        // costs one pass over the text in all.
        start: Start::Span {
            class: scheme_byte,
            min: 1,
            max: usize::MAX,
        },
        near: Some(authority_with_at),
        group: 1,
        // The user may be empty (`redis://:password@host`).
        pattern: r#"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@"']*:([^\s/@"';]+)@"#,
    },
];

/// Keywords of the key-value rule (secret-looking keys followed by a value).
pub(crate) const KEY_VALUE_KEYWORDS: &[&str] = &[
    "pass",
    "pwd",
    "secret",
    "token",
    "key",
    "credential",
    "auth",
];

/// The key-value rule: a key containing a secret-looking word, a separator
/// (`=`, `:`, `:=`, `=>`), and a quoted or bare value. Keys in double quotes
/// are JSON keys, found by the literal scan instead.
pub(crate) const KEY_VALUE_PATTERN: &str = r#"(?i)(?P<key>[A-Za-z0-9_.\-]*(?:pass|pwd|secret|token|key|credential|auth)[A-Za-z0-9_.\-]*)(?:\[[0-9]*\])?'?[ \t]*(?P<sep>:=|=>|=|:)[ \t]*@?(?:"(?P<dq>(?:[^"\\\n]|\\.)*)"|'(?P<sq>(?:[^'\\\n]|\\.)*)'|(?P<bare>[^\n]*))"#;

/// A secret-looking key compared with a quoted literal (`if (api_key == "...")`).
pub(crate) const KEY_COMPARED_PATTERN: &str = r#"(?i)(?P<key>[A-Za-z0-9_.]*(?:pass|pwd|secret|token|key|credential|auth)[A-Za-z0-9_.]*)\s*(?:===?|!==?)\s*(?:"(?P<dq>(?:[^"\\\n]|\\.)*)"|'(?P<sq>(?:[^'\\\n]|\\.)*)')"#;

/// A quoted literal compared with a secret-looking key (`if ("..." == password)`).
pub(crate) const COMPARED_KEY_PATTERN: &str = r#"(?i)(?:"(?P<dq>(?:[^"\\\n]|\\.)*)"|'(?P<sq>(?:[^'\\\n]|\\.)*)')\s*(?:===?|!==?)\s*(?P<key>[A-Za-z0-9_.]*(?:pass|pwd|secret|token|key|credential|auth)[A-Za-z0-9_.]*)"#;
