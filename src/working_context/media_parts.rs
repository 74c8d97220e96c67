//! Images and files as each provider format takes them: inline (base64 the
//! compile read from its media store) or by URL. A part with neither is
//! rendered as its reference line, never as base64 in text.

use serde_json::{json, Value};

use crate::media::{MediaKind, MediaPart, MediaSource};

/// The text of a message with the reference lines of the parts no format
/// can send (neither bytes nor URL) appended.
pub(crate) fn text_with_references<'a>(
    text: &str,
    parts: impl Iterator<Item = &'a MediaPart>,
) -> String {
    let mut out = text.to_string();
    for part in parts {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&part.reference());
    }
    out
}

/// The parts of `media` that can be sent, and those that cannot.
pub(crate) fn sendable(media: &[MediaPart]) -> (Vec<&MediaPart>, Vec<&MediaPart>) {
    media.iter().partition(|p| p.source().is_some())
}

/// A file name for a document: its own, else its artifact's.
fn filename(part: &MediaPart) -> String {
    part.filename.clone().unwrap_or_else(|| {
        let id = part.artifact.as_deref().unwrap_or("document");
        format!("{}.pdf", &id[..id.len().min(12)])
    })
}

/// Chat Completions content parts (`image_url`, `file`); a PDF by URL,
/// which Chat Completions cannot fetch, as its reference.
pub(crate) fn openai(part: &MediaPart) -> Value {
    match (part.kind, part.source()) {
        (MediaKind::Image, Some(_)) => {
            let url = part.location().unwrap_or_default();
            let mut image = json!({ "url": url });
            if let Some(d) = &part.detail {
                image["detail"] = json!(d);
            }
            json!({"type": "image_url", "image_url": image})
        }
        (MediaKind::File, Some(MediaSource::Base64(_))) => json!({
            "type": "file",
            "file": {"filename": filename(part), "file_data": part.data_url()},
        }),
        _ => json!({"type": "text", "text": part.reference()}),
    }
}

/// Responses input content (`input_image`, `input_file`).
pub(crate) fn openai_responses(part: &MediaPart) -> Value {
    match (part.kind, part.source()) {
        (MediaKind::Image, Some(_)) => {
            let url = part.location().unwrap_or_default();
            json!({
                "type": "input_image",
                "image_url": url,
                "detail": part.detail.as_deref().unwrap_or("auto"),
            })
        }
        (MediaKind::File, Some(MediaSource::Base64(_))) => json!({
            "type": "input_file",
            "filename": filename(part),
            "file_data": part.data_url(),
        }),
        (MediaKind::File, Some(MediaSource::Url(u))) => {
            json!({"type": "input_file", "file_url": u})
        }
        (_, None) => json!({"type": "input_text", "text": part.reference()}),
    }
}

/// Anthropic `image` and `document` blocks.
pub(crate) fn anthropic(part: &MediaPart) -> Value {
    let block = match part.kind {
        MediaKind::Image => "image",
        MediaKind::File => "document",
    };
    match part.source() {
        Some(MediaSource::Base64(data)) => json!({
            "type": block,
            "source": {"type": "base64", "media_type": part.media_type, "data": data},
        }),
        Some(MediaSource::Url(u)) => json!({"type": block, "source": {"type": "url", "url": u}}),
        None => json!({"type": "text", "text": part.reference()}),
    }
}

/// Gemini `inlineData` and `fileData` parts.
pub(crate) fn gemini(part: &MediaPart) -> Value {
    match part.source() {
        Some(MediaSource::Base64(data)) => {
            json!({"inlineData": {"mimeType": part.media_type, "data": data}})
        }
        Some(MediaSource::Url(u)) => {
            json!({"fileData": {"mimeType": part.media_type, "fileUri": u}})
        }
        None => json!({"text": part.reference()}),
    }
}

/// AI SDK user content parts (`image`, `file`).
pub(crate) fn ai_sdk(part: &MediaPart) -> Value {
    let data = match part.source() {
        Some(MediaSource::Base64(d)) => d.to_string(),
        Some(MediaSource::Url(u)) => u.to_string(),
        None => return json!({"type": "text", "text": part.reference()}),
    };
    match part.kind {
        MediaKind::Image => json!({"type": "image", "image": data, "mediaType": part.media_type}),
        MediaKind::File => json!({
            "type": "file", "data": data, "mediaType": part.media_type, "filename": filename(part),
        }),
    }
}

/// An AI SDK tool result's content item for `part`: a `file` with its
/// bytes, or text (a URL cannot be written as the `URL` object the type
/// asks for in JSON).
pub(crate) fn ai_sdk_tool_output(part: &MediaPart) -> Value {
    match part.source() {
        Some(MediaSource::Base64(d)) => json!({
            "type": "file", "data": {"type": "data", "data": d}, "mediaType": part.media_type,
        }),
        _ => json!({"type": "text", "text": part.reference()}),
    }
}
