//! Tool names and call ids as providers accept them: `^[a-zA-Z0-9_-]{1,64}$`
//! for OpenAI's and Anthropic's tool names and Anthropic's tool-use ids.
//!
//! A name a model made up (`multi_tool_use.parallel`) or an id a provider
//! wrote with other characters (`toolu_01.A`) would make every later
//! request fail, so they are rewritten, one-to-one and the same every call:
//! an invalid tool name becomes `invalid_tool_<hash>`, an id with other
//! characters keeps its valid characters and gains `_<hash>` of the
//! original (so `toolu_01.A` and `toolu_01_A` stay two ids).

use std::borrow::Cow;

use sha2::{Digest, Sha256};

/// The longest name or id providers take.
pub const PROVIDER_NAME_MAX: usize = 64;

/// The prefix of a rewritten tool name.
pub const INVALID_TOOL_PREFIX: &str = "invalid_tool_";

/// Whether `s` is a name or id every provider takes.
pub fn is_provider_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= PROVIDER_NAME_MAX
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Eight hex digits of the SHA-256 of `s`.
fn short_hash(s: &str) -> String {
    Sha256::digest(s.as_bytes())[..4]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `name` as a tool name providers take: itself when valid, otherwise
/// `invalid_tool_<hash of name>` (the same every call, and no real tool's).
pub fn provider_tool_name(name: &str) -> Cow<'_, str> {
    if is_provider_name(name) {
        Cow::Borrowed(name)
    } else {
        Cow::Owned(format!("{INVALID_TOOL_PREFIX}{}", short_hash(name)))
    }
}

/// `id` as a call id providers take: itself when valid, otherwise its valid
/// characters (others as `_`, at most 48) and `_<hash of id>`, so two
/// different ids never become one.
pub fn provider_call_id(id: &str) -> Cow<'_, str> {
    if is_provider_name(id) {
        return Cow::Borrowed(id);
    }
    let cleaned: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(48)
        .collect();
    let stem = if cleaned.is_empty() { "call" } else { &cleaned };
    Cow::Owned(format!("{stem}_{}", short_hash(id)))
}

/// The id an earlier call is sent under when the provider gave a later
/// call the same `id` (endpoints that restart at `call_0` every turn):
/// [`provider_call_id`] of it, cut to leave room, and `_<hash>` of the id
/// and the call's `generation` (0 for the first call under the id), so
/// every generation has its own id, the same every call.
pub fn superseded_call_id(id: &str, generation: u32) -> String {
    let base = provider_call_id(id);
    let stem: String = base.chars().take(PROVIDER_NAME_MAX - 9).collect();
    format!("{stem}_{}", short_hash(&format!("{id}\u{1f}{generation}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_ids_are_rewritten_one_to_one() {
        assert_eq!(provider_tool_name("read_logs"), "read_logs");
        let parallel = provider_tool_name("multi_tool_use.parallel");
        assert!(parallel.starts_with(INVALID_TOOL_PREFIX) && is_provider_name(&parallel));
        assert_eq!(parallel, provider_tool_name("multi_tool_use.parallel"));
        assert_ne!(parallel, provider_tool_name("multi_tool_use.other"));
        assert!(is_provider_name(&provider_tool_name(&"x".repeat(65))));
        assert_eq!(provider_call_id("toolu_01_A"), "toolu_01_A");
        let dotted = provider_call_id("toolu_01.A");
        assert!(dotted.starts_with("toolu_01_A_") && is_provider_name(&dotted));
        assert_ne!(dotted, provider_call_id("toolu_01_A"));
        assert!(is_provider_name(&provider_call_id("")));
        assert!(is_provider_name(&provider_call_id(&"é".repeat(100))));
        assert_eq!(provider_call_id("call:1/2"), provider_call_id("call:1/2"));
        let (first, second) = (
            superseded_call_id("call_0", 0),
            superseded_call_id("call_0", 1),
        );
        assert!(first.starts_with("call_0_") && is_provider_name(&first));
        assert_ne!(first, second);
        assert!(is_provider_name(&superseded_call_id(&"x.".repeat(64), 3)));
    }
}
