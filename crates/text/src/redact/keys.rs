//! Which keys name secrets, which values are placeholders, which strings are JWTs.

/// Key words that make a key secret on their own.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "pass",
    "passphrase",
    "secret",
    "secrets",
    "token",
    "apikey",
    "credential",
    "credentials",
    "authtoken",
    "accountkey",
    "privatekey",
    "secretkey",
    "accesskey",
    "sessiontoken",
    "clientsecret",
];

/// Adjacent key words that make a key secret together.
const SECRET_PAIRS: &[(&str, &str)] = &[
    ("api", "key"),
    ("access", "key"),
    ("private", "key"),
    ("secret", "key"),
    ("client", "secret"),
    ("auth", "token"),
    ("account", "key"),
    ("session", "token"),
    ("auth", "key"),
    ("master", "key"),
    ("encryption", "key"),
    ("signing", "key"),
];

/// Key words that make a key describe a secret rather than hold one
/// (`max_tokens`, `token_type`, `password_url`, ...).
const NOT_SECRET_WORDS: &[&str] = &[
    "tokens",
    "max",
    "min",
    "count",
    "limit",
    "type",
    "estimate",
    "estimates",
    "usage",
    "budget",
    "num",
    "total",
    "length",
    "len",
    "size",
    "url",
    "uri",
    "endpoint",
    "file",
    "path",
    "name",
    "id",
    "ttl",
    "expiry",
    "expires",
    "expiration",
    "prefix",
    "field",
    "param",
    "header",
    "policy",
    "hint",
    "required",
    "enabled",
    "format",
    "encoding",
    "rotation",
    "reset",
    "forgot",
    "tokenizer",
    "counter",
    "provider",
    "container",
    "manager",
    "factory",
    "handler",
    "callback",
    "get",
    "set",
    "fetch",
    "load",
    "create",
    "generate",
    "validate",
    "verify",
    "check",
    "parse",
    "input",
    "output",
    "prompt",
    "completion",
];

/// Splits a key into lower-case words at `_`, `-`, `.`, spaces and camelCase.
fn words(key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in key.chars() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        cur.push(c.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Whether a key (JSON property, YAML key, env var, ...) names a secret.
pub fn is_secret_key(key: &str) -> bool {
    // A package name or path (`@aws-sdk/credential-provider-node`), not a field.
    if key.contains('/') || key.starts_with('@') {
        return false;
    }
    let w = words(key);
    if w.iter().any(|x| NOT_SECRET_WORDS.contains(&x.as_str())) {
        return false;
    }
    let joined: String = w.concat();
    w.iter().any(|x| {
        SECRET_WORDS.contains(&x.as_str())
            || (x.starts_with("secret") && !x.starts_with("secretar"))
            || x.starts_with("passw")
    }) || w
        .windows(2)
        .any(|p| SECRET_PAIRS.contains(&(p[0].as_str(), p[1].as_str())))
        || [
            "password",
            "passwd",
            "apikey",
            "authtoken",
            "secretkey",
            "accesskey",
            "privatekey",
        ]
        .iter()
        .any(|s| joined.ends_with(s) || joined.starts_with(s))
}

/// Words of a type annotation (`password: str`, `token: Optional[str]`).
const TYPE_WORDS: &[&str] = &[
    "str",
    "string",
    "int",
    "integer",
    "bool",
    "boolean",
    "bytes",
    "float",
    "number",
    "any",
    "object",
    "unknown",
    "secretstr",
    "secretbytes",
    "optional",
    "option",
    "none",
    "null",
    "undefined",
];

/// Whether `v` is a type annotation made only of [`TYPE_WORDS`].
fn is_type_name(v: &str) -> bool {
    v.len() <= 40
        && v.split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .all(|w| TYPE_WORDS.contains(&w.to_ascii_lowercase().as_str()))
}

/// Whether a value is a placeholder, reference or empty rather than a secret:
/// `""`, `null`, `${VAR}`, `$VAR`, `<YOUR_API_KEY>`, `{{ secrets.X }}`,
/// `%(x)s`, `process.env.X`, `***`, type names (`str`, `Optional[str]`),
/// filesystem paths (`/home/ana`, `./certs`),
/// values that say they are fake or examples, and values without a single
/// letter or digit.
pub fn is_placeholder(value: &str) -> bool {
    let v = value.trim().trim_matches(|c| c == '"' || c == '\'');
    let lower = v.to_ascii_lowercase();
    if v.len() < 3 || is_type_name(v) {
        return true;
    }
    if matches!(
        lower.as_str(),
        "null"
            | "none"
            | "nil"
            | "undefined"
            | "true"
            | "false"
            | "yes"
            | "no"
            | "on"
            | "off"
            | "redacted"
    ) {
        return true;
    }
    if !v.chars().any(|c| c.is_alphanumeric()) {
        return true;
    }
    let reference = (v.starts_with("${") && v.ends_with('}'))
        || (v.starts_with('$')
            && v[1..]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_'))
        || (v.starts_with('<') && v.ends_with('>'))
        || (v.starts_with("{{") && v.ends_with("}}"))
        || (v.starts_with("%(") && v.contains(')'))
        || v.starts_with("[REDACTED")
        || lower.starts_with("process.env")
        || lower.starts_with("os.environ")
        || lower.starts_with("getenv(")
        || lower.starts_with("env(")
        || lower.starts_with("secrets.");
    // A filesystem path (`PWD: /Users/ana`), not a secret itself.
    let path = (v.starts_with('/') || v.starts_with("~/") || v.starts_with("./"))
        && v.len() > 1
        && v.chars()
            .all(|c| c.is_alphanumeric() || "/._-~".contains(c));
    reference
        || path
        || v.chars()
            .all(|c| c == '*' || c == 'x' || c == 'X' || c == '.')
        || lower.contains("fake")
        || lower.contains("example")
        || lower.contains("placeholder")
        || lower.contains("changeme")
        || lower.starts_with("your_")
        || lower.starts_with("your-")
}

/// Decodes unpadded base64url; `None` on any invalid character.
fn base64url(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

/// Whether `token` looks like a real JWT: its header and payload decode to
/// JSON objects.
pub(crate) fn is_jwt(token: &str) -> bool {
    let mut parts = token.split('.');
    let decodes = |p: Option<&str>| {
        p.and_then(base64url)
            .and_then(|b| String::from_utf8(b).ok())
            .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
            .is_some_and(|v| v.is_object())
    };
    decodes(parts.next()) && decodes(parts.next())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_keys() {
        for k in [
            "password",
            "db_pass",
            "apiKey",
            "API_KEY",
            "client_secret",
            "aws_secret_access_key",
            "_authToken",
            "AccountKey",
            "private-key",
            "GITHUB_TOKEN",
            "token",
            "my_password_super_secure",
        ] {
            assert!(is_secret_key(k), "{k}");
        }
        for k in [
            "max_tokens",
            "maxTokens",
            "token_count",
            "tokens",
            "token_type",
            "password_url",
            "public_key",
            "key",
            "bypass_mode",
            "compass",
            "tokenizer",
            "input_tokens",
            "keyboard",
        ] {
            assert!(!is_secret_key(k), "{k}");
        }
    }

    #[test]
    fn placeholders() {
        for v in [
            "",
            "null",
            "${API_KEY}",
            "$PASSWORD",
            "<YOUR_API_KEY>",
            "{{ secrets.TOKEN }}",
            "***",
            ",.:-@*?!",
            "somefakekey",
            "%(password)s",
            "process.env.TOKEN",
        ] {
            assert!(is_placeholder(v), "{v}");
        }
        for v in [
            "hunter2!",
            "sk-abc123def456",
            "correct horse battery staple",
        ] {
            assert!(!is_placeholder(v), "{v}");
        }
    }
}
