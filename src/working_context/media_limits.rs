//! What each provider refuses of the images and files in one request, by
//! its published limits: one set of rules, which the checker reports
//! (`anthropic.image_bytes`, ...) and the renderers keep, sending a part
//! the provider would refuse as its reference line and saying why.
//!
//! - Anthropic: an image's base64 data at most 5 MB (5,242,880 bytes), at
//!   most 8,000 pixels a side (2,000 when the request has more than 20
//!   images), at most 100 images a request; a PDF at most 100 pages.
//! - OpenAI (Chat Completions and Responses): images at most 50 MB a
//!   request and 500 of them; PDFs at most 32 MB and 100 pages a request.
//! - Gemini: inline data (base64) at most 20 MB a request.
//!
//! Sizes and counts a request is over are kept by leaving out its oldest
//! parts: the newest (the question's) are sent.

use base64::Engine;
use serde_json::Value;

use crate::media::{MediaKind, MediaPart, MediaSource};
use crate::message::MessageMut;
use crate::working_context::ProviderFormat;

const MB: u64 = 1_000_000;
/// Anthropic: an image's base64 data at most this many bytes.
pub const ANTHROPIC_IMAGE_BASE64_BYTES: u64 = 5 * 1024 * 1024;
/// Anthropic: an image at most this many pixels a side...
pub const ANTHROPIC_IMAGE_SIDE: u32 = 8000;
/// ...and this many when a request has more than [`ANTHROPIC_MANY_IMAGES`].
pub const ANTHROPIC_MANY_IMAGES_SIDE: u32 = 2000;
/// Anthropic: more images than this in a request makes them "many".
pub const ANTHROPIC_MANY_IMAGES: usize = 20;
/// Anthropic: images in one request at most.
pub const ANTHROPIC_MAX_IMAGES: usize = 100;
/// Anthropic: a PDF's pages at most.
pub const ANTHROPIC_PDF_PAGES: u32 = 100;
/// OpenAI: images in one request at most this many bytes...
pub const OPENAI_IMAGE_BYTES: u64 = 50 * MB;
/// ...and at most this many of them.
pub const OPENAI_MAX_IMAGES: usize = 500;
/// OpenAI: PDFs in one request at most this many bytes...
pub const OPENAI_FILE_BYTES: u64 = 32 * MB;
/// ...and this many pages.
pub const OPENAI_FILE_PAGES: u64 = 100;
/// Gemini: inline data (its base64) in one request at most this many bytes.
pub const GEMINI_INLINE_BYTES: u64 = 20 * MB;

/// A part as a request carries it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Sent {
    /// An image (else a PDF).
    pub image: bool,
    /// The length of its base64 data, when it is sent inline.
    pub base64_len: Option<u64>,
    /// An image's width and height, when known.
    pub dims: Option<(u32, u32)>,
    /// A PDF's pages, when known.
    pub pages: Option<u32>,
}

impl Sent {
    fn bytes(&self) -> u64 {
        self.base64_len.map_or(0, |n| n / 4 * 3)
    }
}

/// Why a provider refuses a part: the rule and what breaks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// `<format>.<rule>`.
    pub rule: &'static str,
    /// What is wrong, in words.
    pub message: String,
}

fn refusal(rule: &'static str, message: String) -> Option<Refusal> {
    Some(Refusal { rule, message })
}

/// Refuses, oldest first, the parts `counts` selects that take a request
/// over `limit` (counted newest first: the newest are kept).
fn over_total(
    out: &mut [Option<Refusal>],
    parts: &[Sent],
    counts: impl Fn(&Sent) -> Option<u64>,
    limit: u64,
    why: impl Fn(u64) -> Refusal,
) {
    let mut total = 0u64;
    for i in (0..parts.len()).rev() {
        if out[i].is_some() {
            continue;
        }
        if let Some(n) = counts(&parts[i]) {
            total = total.saturating_add(n);
            if total > limit {
                out[i] = Some(why(total));
            }
        }
    }
}

/// What `format`'s provider refuses of `parts` (a request's images and
/// files, in request order), part by part.
pub(crate) fn refusals(format: ProviderFormat, parts: &[Sent]) -> Vec<Option<Refusal>> {
    let mut out: Vec<Option<Refusal>> = vec![None; parts.len()];
    match format {
        ProviderFormat::Anthropic => {
            let images = parts.iter().filter(|p| p.image).count();
            let side = if images > ANTHROPIC_MANY_IMAGES {
                ANTHROPIC_MANY_IMAGES_SIDE
            } else {
                ANTHROPIC_IMAGE_SIDE
            };
            for (p, o) in parts.iter().zip(out.iter_mut()) {
                *o = if p.image {
                    match (p.base64_len, p.dims) {
                        (Some(n), _) if n > ANTHROPIC_IMAGE_BASE64_BYTES => refusal(
                            "anthropic.image_bytes",
                            format!("Anthropic takes images of at most {ANTHROPIC_IMAGE_BASE64_BYTES} bytes of base64; this one has {n}"),
                        ),
                        (_, Some((w, h))) if w > side || h > side => refusal(
                            "anthropic.image_dimensions",
                            format!("Anthropic takes images of at most {side} pixels a side (with {images} images in the request); this one is {w}x{h}"),
                        ),
                        _ => None,
                    }
                } else {
                    p.pages.filter(|&n| n > ANTHROPIC_PDF_PAGES).and_then(|n| {
                        refusal(
                            "anthropic.document_pages",
                            format!("Anthropic takes PDFs of at most {ANTHROPIC_PDF_PAGES} pages; this one has {n}"),
                        )
                    })
                };
            }
            over_total(
                &mut out,
                parts,
                |p| p.image.then_some(1),
                ANTHROPIC_MAX_IMAGES as u64,
                |_| Refusal {
                    rule: "anthropic.images_per_request",
                    message: format!(
                        "Anthropic takes at most {ANTHROPIC_MAX_IMAGES} images a request"
                    ),
                },
            );
        }
        ProviderFormat::OpenAi | ProviderFormat::OpenAiResponses => {
            over_total(
                &mut out,
                parts,
                |p| p.image.then_some(1),
                OPENAI_MAX_IMAGES as u64,
                |_| Refusal {
                    rule: "openai.images_per_request",
                    message: format!("OpenAI takes at most {OPENAI_MAX_IMAGES} images a request"),
                },
            );
            over_total(
                &mut out,
                parts,
                |p| p.image.then(|| p.bytes()),
                OPENAI_IMAGE_BYTES,
                |total| {
                    Refusal {
                    rule: "openai.image_bytes",
                    message: format!("OpenAI takes at most {OPENAI_IMAGE_BYTES} bytes of images a request; with this one there are {total}"),
                }
                },
            );
            over_total(
                &mut out,
                parts,
                |p| (!p.image).then(|| p.bytes()),
                OPENAI_FILE_BYTES,
                |total| {
                    Refusal {
                    rule: "openai.file_bytes",
                    message: format!("OpenAI takes at most {OPENAI_FILE_BYTES} bytes of PDFs a request; with this one there are {total}"),
                }
                },
            );
            over_total(
                &mut out,
                parts,
                |p| (!p.image).then(|| u64::from(p.pages.unwrap_or(0))),
                OPENAI_FILE_PAGES,
                |total| {
                    Refusal {
                    rule: "openai.file_pages",
                    message: format!("OpenAI takes PDFs of at most {OPENAI_FILE_PAGES} pages a request; with this one there are {total}"),
                }
                },
            );
        }
        ProviderFormat::Gemini => over_total(
            &mut out,
            parts,
            |p| p.base64_len,
            GEMINI_INLINE_BYTES,
            |total| {
                Refusal {
                rule: "gemini.inline_bytes",
                message: format!("Gemini takes at most {GEMINI_INLINE_BYTES} bytes of inline data a request; with this part there are {total}"),
            }
            },
        ),
        // The AI SDK's provider decides; plain text carries no parts.
        ProviderFormat::AiSdk | ProviderFormat::Plain => {}
    }
    out
}

/// `part` as a request in `format` carries it, its bytes read or not.
pub(crate) fn sent_part(part: &MediaPart) -> Sent {
    let base64_len = match part.source() {
        Some(MediaSource::Base64(data)) => Some(data.len() as u64),
        _ => None,
    };
    let image = part.kind == MediaKind::Image;
    Sent {
        image,
        base64_len,
        dims: match (part.width, part.height) {
            (Some(w), Some(h)) => Some((w, h)),
            _ if image => part.data.as_deref().and_then(base64_dims),
            _ => None,
        },
        pages: part.pages,
    }
}

/// The part as the compile expects to send it: inline when it has an
/// artifact (the compile's media store reads it), by its recorded size.
pub(crate) fn planned_part(part: &MediaPart) -> Sent {
    let mut sent = sent_part(part);
    if sent.base64_len.is_none() && part.artifact.is_some() {
        sent.base64_len = part.size_bytes.map(|n| n.div_ceil(3) * 4);
    }
    sent
}

/// An image's width and height from the head of its base64 data (the
/// header of a PNG, GIF or WebP is in its first bytes; a JPEG's may follow
/// its metadata, so more is decoded when needed).
fn base64_dims(data: &str) -> Option<(u32, u32)> {
    for chars in [4096usize, 1 << 16, 1 << 20, 8 << 20] {
        let end = (chars.min(data.len()) / 4) * 4;
        let head = base64::engine::general_purpose::STANDARD
            .decode(&data.as_bytes()[..end])
            .ok()?;
        if let Ok(size) = imagesize::blob_size(&head) {
            return Some((
                u32::try_from(size.width).unwrap_or(u32::MAX),
                u32::try_from(size.height).unwrap_or(u32::MAX),
            ));
        }
        if end == data.len() / 4 * 4 {
            break;
        }
    }
    None
}

/// The pages of a base64 PDF.
fn base64_pages(data: &str) -> Option<u32> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .ok()?;
    Some(crate::media::pdf_pages(&bytes))
}

/// A part in a request: where it is, and how it is sent.
pub(crate) struct Found {
    pub path: String,
    pub sent: Sent,
}

/// The base64 of a `data:` URL.
fn data_url_base64(url: &str) -> Option<&str> {
    url.strip_prefix("data:")?
        .split_once(";base64,")
        .map(|(_, d)| d)
}

fn found(path: String, image: bool, base64: Option<&str>) -> Found {
    Found {
        path,
        sent: Sent {
            image,
            base64_len: base64.map(|d| d.len() as u64),
            dims: if image {
                base64.and_then(base64_dims)
            } else {
                None
            },
            pages: if image {
                None
            } else {
                base64.and_then(base64_pages)
            },
        },
    }
}

fn items(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

/// The images and files of `request` in `format`'s shape, in order.
pub(crate) fn found_in(request: &Value, format: ProviderFormat) -> Vec<Found> {
    let mut out = Vec::new();
    match format {
        ProviderFormat::Anthropic => {
            let mut block = |b: &Value, at: String| {
                if let Some(kind @ ("image" | "document")) = b["type"].as_str() {
                    let data = (b["source"]["type"] == "base64")
                        .then(|| b["source"]["data"].as_str())
                        .flatten();
                    out.push(found(at, kind == "image", data));
                }
            };
            for (i, m) in items(&request["messages"]).iter().enumerate() {
                for (k, b) in items(&m["content"]).iter().enumerate() {
                    let at = format!("/messages/{i}/content/{k}");
                    for (j, c) in items(&b["content"]).iter().enumerate() {
                        block(c, format!("{at}/content/{j}"));
                    }
                    block(b, at);
                }
            }
        }
        ProviderFormat::OpenAi => {
            for (i, m) in items(request).iter().enumerate() {
                for (k, p) in items(&m["content"]).iter().enumerate() {
                    let at = format!("/{i}/content/{k}");
                    match p["type"].as_str() {
                        Some("image_url") => {
                            let url = p["image_url"]["url"].as_str().unwrap_or("");
                            out.push(found(at, true, data_url_base64(url)));
                        }
                        Some("file") => {
                            let url = p["file"]["file_data"].as_str().unwrap_or("");
                            out.push(found(at, false, data_url_base64(url)));
                        }
                        _ => {}
                    }
                }
            }
        }
        ProviderFormat::OpenAiResponses => {
            for (i, item) in items(&request["input"]).iter().enumerate() {
                let (field, parts) = if item["type"] == "function_call_output" {
                    ("output", &item["output"])
                } else {
                    ("content", &item["content"])
                };
                for (k, p) in items(parts).iter().enumerate() {
                    let at = format!("/input/{i}/{field}/{k}");
                    match p["type"].as_str() {
                        Some("input_image") => {
                            let url = p["image_url"].as_str().unwrap_or("");
                            out.push(found(at, true, data_url_base64(url)));
                        }
                        Some("input_file") => {
                            let url = p["file_data"].as_str().unwrap_or("");
                            out.push(found(at, false, data_url_base64(url)));
                        }
                        _ => {}
                    }
                }
            }
        }
        ProviderFormat::Gemini => {
            for (i, c) in items(&request["contents"]).iter().enumerate() {
                for (k, p) in items(&c["parts"]).iter().enumerate() {
                    let inline = &p["inlineData"];
                    if inline.is_object() {
                        let image = inline["mimeType"]
                            .as_str()
                            .is_some_and(|t| t.starts_with("image/"));
                        out.push(found(
                            format!("/contents/{i}/parts/{k}"),
                            image,
                            inline["data"].as_str(),
                        ));
                    }
                }
            }
        }
        ProviderFormat::AiSdk | ProviderFormat::Plain => {}
    }
    out
}

/// The media rules `request` breaks: `(rule, path, message)` each.
pub(crate) fn check(
    request: &Value,
    format: ProviderFormat,
) -> Vec<(&'static str, String, String)> {
    let found = found_in(request, format);
    let sent: Vec<Sent> = found.iter().map(|f| f.sent).collect();
    refusals(format, &sent)
        .into_iter()
        .zip(found)
        .filter_map(|(r, f)| r.map(|r| (r.rule, f.path, r.message)))
        .collect()
}

/// Takes the parts `format`'s provider would refuse out of `messages` (in
/// request order): each leaves its reference line saying why it was not
/// sent. `planned`: judge the parts as the compile will send them (inline
/// when they have an artifact), else as they are now. Returns the index of
/// each message that lost parts, with the tokens those were priced at.
pub(crate) fn keep_within(
    messages: &mut [impl MessageMut],
    format: ProviderFormat,
    planned: bool,
) -> Vec<(usize, u64)> {
    let judge = if planned { planned_part } else { sent_part };
    let sent: Vec<Sent> = messages
        .iter()
        .flat_map(|m| m.message().media.iter().map(judge))
        .collect();
    if sent.is_empty() {
        return Vec::new();
    }
    let mut refused = refusals(format, &sent).into_iter();
    let mut out = Vec::new();
    for (i, m) in messages.iter_mut().enumerate() {
        let verdicts: Vec<Option<Refusal>> =
            refused.by_ref().take(m.message().media.len()).collect();
        if verdicts.iter().all(Option::is_none) {
            continue;
        }
        let m = m.message_mut();
        let mut saved = 0;
        let mut kept = Vec::with_capacity(m.media.len());
        for (part, verdict) in std::mem::take(&mut m.media).into_iter().zip(verdicts) {
            match verdict {
                None => kept.push(part),
                Some(r) => {
                    saved += part.tokens.unwrap_or(0);
                    if !m.content.is_empty() {
                        m.content.push('\n');
                    }
                    m.content
                        .push_str(&format!("{} (not sent: {})", part.reference(), r.message));
                }
            }
        }
        m.media = kept;
        m.tokens = None;
        out.push((i, saved));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(len: u64, w: u32, h: u32) -> Sent {
        Sent {
            image: true,
            base64_len: Some(len),
            dims: Some((w, h)),
            pages: None,
        }
    }

    #[test]
    fn each_providers_limits() {
        let rules = |format, parts: &[Sent]| -> Vec<Option<&'static str>> {
            refusals(format, parts)
                .into_iter()
                .map(|r| r.map(|r| r.rule))
                .collect()
        };
        let big = image(6_400_000, 100, 100);
        let wide = image(1000, 9000, 9000);
        let fine = image(1000, 1000, 1000);
        assert_eq!(
            rules(ProviderFormat::Anthropic, &[big, wide, fine]),
            [
                Some("anthropic.image_bytes"),
                Some("anthropic.image_dimensions"),
                None
            ]
        );
        // Over 20 images, 2,000 pixels a side.
        let mid = image(1000, 2500, 1000);
        let many: Vec<Sent> = std::iter::once(mid)
            .chain(std::iter::repeat_n(fine, 20))
            .collect();
        assert_eq!(
            rules(ProviderFormat::Anthropic, &many)[0],
            Some("anthropic.image_dimensions")
        );
        assert_eq!(rules(ProviderFormat::Anthropic, &many[..20])[0], None);
        // The oldest go beyond a count.
        let crowd = vec![image(10, 10, 10); 103];
        let anthropic = rules(ProviderFormat::Anthropic, &crowd);
        assert_eq!(anthropic.iter().filter(|r| r.is_some()).count(), 3);
        assert!(anthropic[..3]
            .iter()
            .all(|r| *r == Some("anthropic.images_per_request")));
        let pdf = Sent {
            image: false,
            base64_len: Some(100),
            dims: None,
            pages: Some(120),
        };
        assert_eq!(
            rules(ProviderFormat::Anthropic, &[pdf]),
            [Some("anthropic.document_pages")]
        );
        // OpenAI and Gemini: totals, newest kept.
        let heavy = image(40_000_000, 100, 100);
        assert_eq!(
            rules(ProviderFormat::OpenAi, &[heavy, heavy]),
            [Some("openai.image_bytes"), None]
        );
        assert_eq!(
            rules(ProviderFormat::Gemini, &[heavy, fine]),
            [Some("gemini.inline_bytes"), None]
        );
        assert_eq!(rules(ProviderFormat::AiSdk, &[big, wide]), [None, None]);
    }

    #[test]
    fn dimensions_are_read_from_base64() {
        // A PNG header: 9000 x 10 pixels.
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&9000u32.to_be_bytes());
        png.extend_from_slice(&10u32.to_be_bytes());
        png.extend_from_slice(&[8, 6, 0, 0, 0]);
        let data = base64::engine::general_purpose::STANDARD.encode(&png);
        assert_eq!(base64_dims(&data), Some((9000, 10)));
        assert_eq!(base64_dims("not base64!"), None);
        assert_eq!(data_url_base64("data:image/png;base64,AAAA"), Some("AAAA"));
        assert_eq!(data_url_base64("https://example.com/a.png"), None);
    }
}
