//! The redaction rules: one pattern per credential format, each with the
//! keywords that must occur for it to run.

/// A credential pattern.
pub(crate) struct Rule {
    /// Stable rule id, used in replacements (`[REDACTED:<id>]`) and findings.
    pub(crate) id: &'static str,
    /// Lower-case keywords; the rule runs only where one occurs (ASCII case-insensitive).
    pub(crate) keywords: &'static [&'static str],
    /// The pattern (`regex` syntax: linear time, no backtracking).
    pub(crate) pattern: &'static str,
    /// The capture group holding the secret (0: the whole match).
    pub(crate) group: usize,
}

/// Every rule, most specific first (on overlapping matches the earlier,
/// longer one wins).
pub(crate) const RULES: &[Rule] = &[
    Rule {
        id: "pem-private-key",
        keywords: &["private key"],
        group: 0,
        // Up to its END line, or (cut off) over every base64 line that follows.
        // A key's body never holds a `"`, so a match never leaves the JSON
        // string it is written in.
        pattern: r#"-----BEGIN[A-Z ]*PRIVATE KEY(?: BLOCK)?-----(?:[^"]*?-----END[A-Z ]*PRIVATE KEY(?: BLOCK)?-----|(?:(?:\r?\n|\\r?\\n)+(?:[ \t]*[A-Za-z0-9+/=]{16,}|[A-Za-z-]+:[^\n\\"]*))*)"#,
    },
    Rule {
        id: "anthropic-api-key",
        keywords: &["sk-ant-"],
        group: 0,
        pattern: r"\bsk-ant-[a-z]{2,8}\d{2}-[A-Za-z0-9_-]{20,}",
    },
    Rule {
        id: "openai-api-key",
        keywords: &["sk-"],
        group: 0,
        pattern: r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}",
    },
    Rule {
        id: "github-token",
        keywords: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        group: 0,
        pattern: r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b",
    },
    Rule {
        id: "github-fine-grained-token",
        keywords: &["github_pat_"],
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
            "gr1348941",
        ],
        group: 0,
        pattern: r"\b(?:(?:glpat|gldt|glsoat|glrt|glcbt|glimt|glptt|gloas)-|GR1348941)[A-Za-z0-9_-]{20,}",
    },
    Rule {
        id: "aws-access-key-id",
        keywords: &["akia", "asia", "abia", "acca"],
        group: 0,
        pattern: r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
    },
    Rule {
        id: "google-api-key",
        keywords: &["aiza"],
        group: 0,
        pattern: r"\bAIza[0-9A-Za-z_-]{35}",
    },
    Rule {
        id: "slack-token",
        keywords: &["xox"],
        group: 0,
        pattern: r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
    },
    Rule {
        id: "slack-webhook",
        keywords: &["hooks.slack.com"],
        group: 0,
        pattern: r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+",
    },
    Rule {
        id: "stripe-key",
        keywords: &["_live_", "_test_"],
        group: 0,
        pattern: r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",
    },
    Rule {
        id: "sendgrid-api-key",
        keywords: &["sg."],
        group: 0,
        pattern: r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}",
    },
    Rule {
        id: "npm-token",
        keywords: &["npm_"],
        group: 0,
        pattern: r"\bnpm_[A-Za-z0-9]{36}\b",
    },
    Rule {
        id: "pypi-token",
        keywords: &["pypi-"],
        group: 0,
        pattern: r"\bpypi-AgE[A-Za-z0-9_-]{50,}",
    },
    Rule {
        id: "huggingface-token",
        keywords: &["hf_"],
        group: 0,
        pattern: r"\bhf_[A-Za-z0-9]{34,}\b",
    },
    Rule {
        id: "twilio-key",
        // API key SIDs. Account SIDs (`AC…`) identify an account, like a
        // user name, and appear in prose and URLs: not redacted.
        keywords: &["sk"],
        group: 0,
        pattern: r"\bSK[0-9a-fA-Fx]{32}\b",
    },
    Rule {
        id: "telegram-bot-token",
        keywords: &[":aa"],
        group: 0,
        pattern: r"\b\d{8,10}:AA[0-9A-Za-z_-]{32,33}\b",
    },
    Rule {
        id: "discord-bot-token",
        keywords: &["."],
        group: 0,
        pattern: r"\b[MNOA][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}\b",
    },
    Rule {
        id: "artifactory-token",
        keywords: &["akc", "ap"],
        group: 1,
        pattern: r#"(?:^|[\s=:"'])(AKC[A-Za-z0-9]{10,}|AP[0-9A-F][A-Za-z0-9]{8,})"#,
    },
    Rule {
        id: "jwt",
        keywords: &["eyj"],
        group: 0,
        pattern: r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]{10,})?",
    },
    Rule {
        id: "authorization-header",
        keywords: &["authorization"],
        group: 1,
        pattern: r#"(?i)authorization["']?\s*[:=]\s*["']?(?:bearer|basic|token|digest|apikey)\s+([A-Za-z0-9._~+/=-]{6,})"#,
    },
    Rule {
        id: "bearer-token",
        keywords: &["bearer"],
        group: 1,
        pattern: r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)",
    },
    Rule {
        id: "basic-auth-flag",
        keywords: &["-u", "--user"],
        group: 1,
        pattern: r#"(?:\s-u|\s--user)\s+["']?[^\s:"']+:([^\s"']+)"#,
    },
    Rule {
        id: "url-credentials",
        keywords: &["://"],
        group: 1,
        pattern: r#"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@"']+:([^\s/@"';]+)@"#,
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
