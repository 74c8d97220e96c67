//! Images and files in a conversation: a user's screenshot, a tool's PDF.
//!
//! Their bytes live in an [`ArtifactStore`] (content-addressed, verified on
//! read); events hold a [`MediaPart`] naming them (`media: [...]` beside a
//! `user_input`'s text or a tool outcome's result), never the bytes and never
//! base64. A compile counts each part by its provider's published rule
//! ([`cost`]) and, given a store, reads the bytes of the parts it keeps so
//! that rendering stays synchronous.

pub mod cost;
mod pdf;
pub use pdf::{pdf_pages, UNKNOWN_PAGES};

use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::artifacts::{ArtifactStore, StoreOptions};
use crate::error::{Error, ErrorCode, Result};

/// Whether a part is an image or a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MediaKind {
    /// PNG, JPEG, GIF or WebP.
    Image,
    /// A PDF document.
    File,
}

/// An image or a file in an event: where its bytes are (an artifact, or a
/// URL the provider fetches) and what its cost depends on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MediaPart {
    /// `image` or `file`.
    #[serde(rename = "type")]
    pub kind: MediaKind,
    /// The MIME type: `image/png`, `image/jpeg`, `image/gif`, `image/webp`
    /// or `application/pdf`.
    pub media_type: String,
    /// The artifact holding the bytes (SHA-256, hex).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<String>,
    /// A URL the provider fetches the bytes from (`https:`), instead of an
    /// artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The size of the bytes, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    /// An image's width in pixels, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    /// An image's height in pixels, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
    /// A PDF's page count, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<u32>,
    /// The file's name, sent with a document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// OpenAI's image detail: `low`, `high` or `auto` (the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// What the part costs in the compile's provider tokens (set by the
    /// compile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// The bytes as base64, read by the compile from its media store; never
    /// serialised (a context's JSON names the artifact only).
    #[serde(skip)]
    pub data: Option<Rc<str>>,
}

/// The image types every provider takes.
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];
/// The document type every provider takes.
pub const PDF: &str = "application/pdf";

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

/// The kind of `media_type`, or `None` when no provider takes it as media.
pub fn kind_of(media_type: &str) -> Option<MediaKind> {
    if IMAGE_TYPES.contains(&media_type) {
        Some(MediaKind::Image)
    } else if media_type == PDF {
        Some(MediaKind::File)
    } else {
        None
    }
}

impl MediaPart {
    /// Reads and checks a part as events hold it: a known type, its bytes in
    /// an artifact (64 hex digits) or at an `http(s)` URL, and no inline
    /// `data` (bytes go to a store; see [`attach`]).
    pub fn from_json(value: &Value) -> Result<MediaPart> {
        if value.get("data").is_some() {
            return Err(invalid(
                "a media part holds no bytes: store them first (attachMedia) and record the part it returns",
            ));
        }
        let part: MediaPart = serde_json::from_value(value.clone()).map_err(|e| {
            invalid(format!(
                "a media part is {{ type: \"image\" | \"file\", mediaType, artifact | url, ... }}: {e}"
            ))
        })?;
        if kind_of(&part.media_type) != Some(part.kind) {
            return Err(invalid(format!(
                "media type {:?} is not an image (png, jpeg, gif, webp) or a PDF of the part's type",
                part.media_type
            )));
        }
        match (&part.artifact, &part.url) {
            (Some(id), _) if id.len() != 64 || !id.bytes().all(|b| b.is_ascii_hexdigit()) => Err(
                invalid(format!("media artifact {id:?} is not a SHA-256 in hex")),
            ),
            (None, Some(url)) if !(url.starts_with("https://") || url.starts_with("http://")) => {
                Err(invalid(format!("media url {url:?} is not an http(s) URL")))
            }
            (None, None) => Err(invalid("a media part needs an artifact or a url")),
            _ => Ok(part),
        }
    }

    /// A line standing in for the part in text: what it is and where.
    pub fn reference(&self) -> String {
        let what = match self.kind {
            MediaKind::Image => "image",
            MediaKind::File => "file",
        };
        let at = match (&self.artifact, &self.url) {
            (Some(id), _) => format!("artifact {id}"),
            (None, Some(url)) => url.clone(),
            (None, None) => "nowhere".into(),
        };
        let size = match (self.width, self.height, self.pages) {
            (Some(w), Some(h), _) => format!(", {w}x{h}"),
            (_, _, Some(p)) => format!(", {p} pages"),
            _ => String::new(),
        };
        format!("[{what} {}{size}: {at}]", self.media_type)
    }

    /// The part as a data URL, when its bytes were read.
    pub fn data_url(&self) -> Option<String> {
        let data = self.data.as_deref()?;
        Some(format!("data:{};base64,{data}", self.media_type))
    }

    /// A URL for the bytes: the data URL of those read, else the part's URL.
    pub fn location(&self) -> Option<String> {
        self.data_url().or_else(|| self.url.clone())
    }

    /// Where a provider can get the bytes: the data read, else the URL.
    pub fn source(&self) -> Option<MediaSource<'_>> {
        match (&self.data, &self.url) {
            (Some(data), _) => Some(MediaSource::Base64(data)),
            (None, Some(url)) => Some(MediaSource::Url(url)),
            (None, None) => None,
        }
    }
}

/// Where a renderer takes a part's bytes from.
pub enum MediaSource<'a> {
    /// The bytes, base64.
    Base64(&'a str),
    /// A URL the provider fetches.
    Url(&'a str),
}

/// The media parts of an event's data (`media: [...]`): empty when it has
/// none; an error naming the first bad part otherwise.
pub fn parts_of(data: &Value) -> Result<Vec<MediaPart>> {
    match crate::json_text::member(data, "media") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                MediaPart::from_json(v).map_err(|e| invalid(format!("media[{i}]: {}", e.message())))
            })
            .collect(),
        Some(_) => Err(invalid("media must be an array of media parts")),
    }
}

/// What a media part says about its bytes: type, size, dimensions, pages.
pub fn describe(bytes: &[u8], media_type: Option<&str>) -> Result<MediaPart> {
    let sniffed = sniff_mime(bytes);
    let media_type = match media_type {
        Some(t) if kind_of(t).is_some() => t,
        Some(t) => {
            return Err(invalid(format!(
                "media type {t:?} is not an image (png, jpeg, gif, webp) or a PDF"
            )))
        }
        None => sniffed,
    };
    let kind = kind_of(media_type).ok_or_else(|| {
        invalid(format!(
            "the bytes are not an image (png, jpeg, gif, webp) or a PDF (they look like {sniffed})"
        ))
    })?;
    let (width, height) = match kind {
        MediaKind::Image => {
            let size = imagesize::blob_size(bytes).map_err(|e| {
                invalid(format!("the {media_type} image's size cannot be read: {e}"))
            })?;
            (
                Some(u32::try_from(size.width).unwrap_or(u32::MAX)),
                Some(u32::try_from(size.height).unwrap_or(u32::MAX)),
            )
        }
        MediaKind::File => (None, None),
    };
    Ok(MediaPart {
        kind,
        media_type: media_type.to_string(),
        artifact: None,
        url: None,
        size_bytes: Some(bytes.len() as u64),
        width,
        height,
        pages: (kind == MediaKind::File).then(|| pdf_pages(bytes)),
        filename: None,
        detail: None,
        tokens: None,
        data: None,
    })
}

/// Options of [`attach`].
#[derive(Debug, Clone, Default)]
pub struct AttachOptions {
    /// The MIME type; sniffed from the bytes when `None`.
    pub media_type: Option<String>,
    /// A document's file name.
    pub filename: Option<String>,
    /// OpenAI's image detail (`low`, `high`, `auto`).
    pub detail: Option<String>,
    /// Where the bytes came from (`user`, `tool:<name>`), for the store.
    pub source: String,
    /// The session storing them.
    pub session_id: Option<String>,
}

/// Stores `bytes` (an image or a PDF) in `store` and returns the part to
/// record: `session.record("user_input", { text, media: [part] })`.
pub async fn attach(
    store: &dyn ArtifactStore,
    bytes: &[u8],
    options: AttachOptions,
) -> Result<MediaPart> {
    let mut part = describe(bytes, options.media_type.as_deref())?;
    if let Some(d) = &options.detail {
        if !matches!(d.as_str(), "low" | "high" | "auto") {
            return Err(invalid(format!(
                "detail must be \"low\", \"high\" or \"auto\" (got {d:?})"
            )));
        }
    }
    let handle = store
        .store(
            bytes,
            &options.source,
            StoreOptions {
                mime_type: Some(part.media_type.clone()),
                session_id: options.session_id,
            },
        )
        .await?;
    part.artifact = Some(handle.artifact_id);
    part.filename = options.filename;
    part.detail = options.detail;
    Ok(part)
}

/// Reads the bytes of `part` from `store` as base64 into `part.data`
/// (verified by the store); `false` when the store does not have them, or
/// when they are not of the part's type (a part recorded by hand naming
/// other bytes): a provider would refuse them.
pub async fn load(part: &mut MediaPart, store: &dyn ArtifactStore) -> Result<bool> {
    use base64::Engine;
    let Some(id) = part.artifact.as_deref() else {
        return Ok(false);
    };
    match store.retrieve(id).await? {
        Some(bytes) if sniff_mime(&bytes) != part.media_type => Ok(false),
        Some(bytes) => {
            let text = base64::engine::general_purpose::STANDARD.encode(bytes);
            part.data = Some(Rc::from(text));
            Ok(true)
        }
        None => Ok(false),
    }
}

/// The MIME type the first bytes of `bytes` name, for the formats tools
/// return most (images, PDFs, archives).
pub fn sniff_mime(bytes: &[u8]) -> &'static str {
    const MAGIC: &[(&[u8], &str)] = &[
        (b"\x89PNG\r\n\x1a\n", "image/png"),
        (b"\xff\xd8\xff", "image/jpeg"),
        (b"GIF87a", "image/gif"),
        (b"GIF89a", "image/gif"),
        (b"%PDF-", "application/pdf"),
        (b"PK\x03\x04", "application/zip"),
        (b"\x1f\x8b", "application/gzip"),
    ];
    if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        return "image/webp";
    }
    MAGIC
        .iter()
        .find(|(magic, _)| bytes.starts_with(magic))
        .map_or("application/octet-stream", |(_, mime)| mime)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parts_are_checked_when_read() {
        let id = "a".repeat(64);
        let ok = json!({"type": "image", "mediaType": "image/png", "artifact": id, "width": 10, "height": 20});
        assert_eq!(MediaPart::from_json(&ok).unwrap().width, Some(10));
        for bad in [
            json!({"type": "image", "mediaType": "image/png", "data": "iVBOR"}),
            json!({"type": "image", "mediaType": "image/tiff", "artifact": id}),
            json!({"type": "file", "mediaType": "image/png", "artifact": id}),
            json!({"type": "image", "mediaType": "image/png"}),
            json!({"type": "image", "mediaType": "image/png", "artifact": "abc"}),
            json!({"type": "image", "mediaType": "image/png", "url": "file:///etc/passwd"}),
            json!({"type": "video", "mediaType": "image/png", "artifact": id}),
            json!("image"),
        ] {
            let e = MediaPart::from_json(&bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{bad}");
        }
        assert!(parts_of(&json!({"media": "x"})).is_err());
        assert_eq!(parts_of(&json!({"text": "hi"})).unwrap(), vec![]);
    }
}
