//! Content-addressed storage for large payloads.
//!
//! An artifact's id is the SHA-256 of its content (lower-case hex), so storing
//! the same bytes twice gives the same handle, and a read can verify that what
//! comes back is what went in: every backend must return an
//! [`ErrorCode::ArtifactIntegrity`](crate::error::ErrorCode::ArtifactIntegrity) error rather than altered content.

mod hash;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::error::Result;

pub(crate) use hash::verify_digest;
pub use hash::{content_id_by, hex, sha256, verify_by, Hasher, Sha2Hasher};

/// A lightweight reference to an externalised payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ArtifactHandle {
    /// SHA-256 of the content, lower-case hex.
    pub artifact_id: String,
    /// The first ~200 characters of the content, cut at a word boundary.
    pub summary: String,
    /// The content's size in bytes.
    pub size_bytes: u64,
    /// The content's MIME type.
    pub mime_type: String,
    /// When the artifact was first stored, in milliseconds since the epoch.
    pub created_at: f64,
    /// Where the payload came from, e.g. `tool:file_read`.
    pub source: String,
    /// The session that stored it, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub session_id: Option<String>,
}

/// Sorts handles by id: the order every backend lists them in (a store
/// written outside the crate sorts its `list_handles` with it too).
pub fn sort_by_id(handles: &mut [ArtifactHandle]) {
    context_compiler_text::order::sort_stable_by(handles, |a, b| a.artifact_id.cmp(&b.artifact_id));
}

impl ArtifactHandle {
    /// The handle of `content` (whose [`content_id`] is `artifact_id`)
    /// stored now (`created_at`) for the first time.
    pub fn describe(
        artifact_id: String,
        content: &[u8],
        source: &str,
        options: &StoreOptions,
        created_at: f64,
    ) -> Self {
        let head = &content[..content.len().min(SUMMARY_HEAD_BYTES)];
        Self::describe_head(
            artifact_id,
            head,
            content.len(),
            source,
            options,
            created_at,
        )
    }

    /// [`ArtifactHandle::describe`] from the content's first
    /// [`SUMMARY_HEAD_BYTES`] (or all of it, when shorter) and its size: for
    /// content that stays in the host's memory.
    pub fn describe_head(
        artifact_id: String,
        head: &[u8],
        size_bytes: usize,
        source: &str,
        options: &StoreOptions,
        created_at: f64,
    ) -> Self {
        ArtifactHandle {
            artifact_id,
            summary: if is_binary(head, head.len() == size_bytes) {
                format!("binary content ({size_bytes} bytes)")
            } else {
                summary_of_head(head, head.len() == size_bytes)
            },
            size_bytes: size_bytes as u64,
            mime_type: options
                .mime_type
                .clone()
                .unwrap_or_else(|| DEFAULT_MIME_TYPE.into()),
            created_at,
            source: source.to_string(),
            session_id: options.session_id.clone(),
        }
    }
}

/// Options of [`ArtifactStore::store`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreOptions {
    /// MIME type; `text/plain` when `None`.
    pub mime_type: Option<String>,
    /// The session storing the artifact, for [`ArtifactStore::list_handles`].
    pub session_id: Option<String>,
}

/// The MIME type used when none is given.
pub const DEFAULT_MIME_TYPE: &str = "text/plain";

/// Async storage for large payloads (single-threaded: no `Send` bound, as
/// WebAssembly hosts are single-threaded).
#[async_trait(?Send)]
pub trait ArtifactStore {
    /// Stores `content` and returns its handle; storing the same content again
    /// returns the existing handle.
    async fn store(
        &self,
        content: &[u8],
        source: &str,
        options: StoreOptions,
    ) -> Result<ArtifactHandle>;
    /// The content of `artifact_id`, verified against its hash; `None` when absent.
    async fn retrieve(&self, artifact_id: &str) -> Result<Option<Vec<u8>>>;
    /// Whether `artifact_id` is stored.
    async fn exists(&self, artifact_id: &str) -> Result<bool>;
    /// Handles of every artifact, or of those stored by `session_id`.
    async fn list_handles(&self, session_id: Option<&str>) -> Result<Vec<ArtifactHandle>>;
    /// Deletes `artifact_id`; `false` when it was not stored.
    async fn delete(&self, artifact_id: &str) -> Result<bool>;
}

/// The artifact id of `content`: its SHA-256, lower-case hex (in Rust;
/// stores hash through their [`Hasher`]).
pub fn content_id(content: &[u8]) -> String {
    hex(&sha256(content))
}

/// Maximum summary length in characters (before the ellipsis).
pub const SUMMARY_MAX_CHARS: usize = 200;

/// A summary of `content`: its first [`SUMMARY_MAX_CHARS`] characters
/// (invalid UTF-8 replaced), cut at the last space when that keeps more than
/// half, followed by `...` when cut.
pub fn make_summary(content: &[u8]) -> String {
    let head = &content[..content.len().min(SUMMARY_HEAD_BYTES)];
    summary_of_head(head, head.len() == content.len())
}

/// How many leading bytes of content a summary reads: enough for
/// [`SUMMARY_MAX_CHARS`] characters of up to four bytes, and one more.
pub const SUMMARY_HEAD_BYTES: usize = SUMMARY_MAX_CHARS * 4 + 4;

/// The summary of content whose first bytes are `head` (`whole` when they
/// are all of it).
/// Whether `head` (the whole content when `whole`) is not text: it is not
/// UTF-8 (but for a character cut at its end). NUL bytes are text.
fn is_binary(head: &[u8], whole: bool) -> bool {
    match std::str::from_utf8(head) {
        Ok(_) => false,
        Err(e) => whole || e.error_len().is_some() || head.len() - e.valid_up_to() > 3,
    }
}

fn summary_of_head(head: &[u8], whole: bool) -> String {
    // NUL separators read as spaces (and no text column refuses them).
    let text = String::from_utf8_lossy(head).replace('\0', " ");
    let mut chars = text.char_indices();
    let cut = match chars.nth(SUMMARY_MAX_CHARS) {
        None if whole => return text,
        None => text.len(),
        Some((i, _)) => i,
    };
    let truncated = &text[..cut];
    let truncated = match truncated.rfind(' ') {
        Some(space) if truncated[..space].chars().count() > SUMMARY_MAX_CHARS / 2 => {
            &truncated[..space]
        }
        _ => truncated,
    };
    format!("{truncated}...")
}

/// A reference to an externalised payload: its handle and a short summary
/// stand in for the payload itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactRef {
    /// The artifact id (SHA-256 of the content, hex).
    pub handle: String,
    /// A short summary of the content.
    pub summary: String,
    /// The content's size in bytes.
    pub size_bytes: u64,
    /// Where the payload came from, e.g. `tool:file_read`.
    #[serde(default)]
    pub source: String,
    /// The session event whose payload was externalised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_id: Option<String>,
    /// Cached token count of `summary`.
    #[serde(skip)]
    pub tokens: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_id_is_sha256_hex() {
        assert_eq!(
            content_id(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn summary_is_short_and_cut_at_a_word() {
        let content = "word ".repeat(500);
        let s = make_summary(content.as_bytes());
        assert!(s.chars().count() <= 210, "{}", s.len());
        assert!(s.ends_with("word..."));
        assert_eq!(make_summary(b"short"), "short");
        let s = make_summary("é".repeat(1000).as_bytes());
        assert_eq!(s.chars().count(), SUMMARY_MAX_CHARS + 3);
    }

    #[test]
    fn summary_of_invalid_utf8_is_lossy_not_a_panic() {
        let s = make_summary(&[0xff, 0xfe, b'o', b'k']);
        assert!(s.ends_with("ok"));
        assert!(s.contains('\u{fffd}'));
    }
}
