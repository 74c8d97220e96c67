//! What an image or a PDF costs in a provider's input tokens, by each
//! provider's published rule (as of 2026-11) for the model named in the
//! compile options, or for the format's provider when none is named.
//!
//! - **OpenAI**, tile models (GPT-4o, GPT-4.1, GPT-4.5, GPT-5, o1, o3):
//!   the image is scaled to fit 2048×2048, then its shorter side to 768;
//!   it costs a base plus a price per 512-pixel tile (85 + 170 per tile;
//!   GPT-5: 70 + 140; GPT-4o mini: 2,833 + 5,667); `detail: "low"` costs
//!   the base alone. Patch models (GPT-4.1 mini and nano, GPT-5 mini and
//!   nano, o4-mini): one patch per 32×32 pixels, at most 1,536 (the image
//!   is scaled down to fit), times the model's multiplier.
//! - **Anthropic**: scaled so the long edge is at most 1,568 pixels and the
//!   area at most 1092 × 1092 pixels (the largest square of its table), then width × height / 750.
//! - **Gemini** 2.x: 258 when both sides are at most 384 pixels, else 258
//!   per 768×768 tile; Gemini 3: 1,120 per image (its default media
//!   resolution).
//! - **PDFs**: each page is sent as its text and an image of the page.
//!   OpenAI and Anthropic: 3,000 tokens of text per page (the top of
//!   Anthropic's published 1,500–3,000) plus the page image (1224×1584, a
//!   letter page at 144 dpi) by the rule above; Gemini 258 per page
//!   (Gemini 3: 560).
//!
//! With no model and a format shared by providers (the AI SDK's, plain),
//! the most any of the three charges. An image of unknown size (by URL)
//! costs the most its rule allows; a PDF of unknown length counts 10 pages.

use crate::media::{MediaKind, MediaPart};
use crate::wire::ProviderFormat;

/// What a compile prices media by: the format its request goes out in and
/// the model named in the compile options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MediaPricing {
    /// The request's format.
    pub format: Option<ProviderFormat>,
    /// The model (`gpt-4.1`, `claude-sonnet-4-5`, `gemini-2.5-pro`, ...).
    pub model: Option<String>,
}

impl MediaPricing {
    /// What `part` costs under this pricing (see [`media_tokens`]).
    pub fn tokens(&self, part: &MediaPart) -> u64 {
        media_tokens(part, self.format, self.model.as_deref())
    }
}

/// Tokens of text counted per PDF page.
pub const PDF_PAGE_TEXT_TOKENS: u64 = 3_000;
/// The pixel size a PDF page is counted as (letter at 144 dpi).
pub const PDF_PAGE_PIXELS: (u32, u32) = (1224, 1584);
/// Pages counted for a PDF whose length is unknown.
pub const UNKNOWN_PDF_PAGES: u32 = 10;

/// A provider's image rule.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Rule {
    /// OpenAI tiles: base and per-tile tokens.
    Tiles { base: u64, tile: u64 },
    /// OpenAI patches: the multiplier.
    Patches { multiplier: f64 },
    /// Anthropic: area / 750.
    Area,
    /// Gemini 2.x: 258 per 768-pixel tile.
    GeminiTiles,
    /// Gemini 3: a flat price per image and per page.
    GeminiFlat,
}

/// The rule of `model` (by its family's name), else the format's.
fn rules(format: Option<ProviderFormat>, model: Option<&str>) -> Vec<Rule> {
    if let Some(model) = model.map(str::to_ascii_lowercase) {
        let m = model.rsplit('/').next().unwrap_or(&model);
        let patch = [
            ("gpt-4.1-mini", 1.62),
            ("gpt-4.1-nano", 2.46),
            ("gpt-5-mini", 1.62),
            ("gpt-5-nano", 2.46),
            ("o4-mini", 1.72),
        ];
        if let Some((_, multiplier)) = patch.iter().find(|(p, _)| m.starts_with(p)) {
            return vec![Rule::Patches {
                multiplier: *multiplier,
            }];
        }
        if m.starts_with("gpt-4o-mini") {
            return vec![Rule::Tiles {
                base: 2_833,
                tile: 5_667,
            }];
        }
        if m.starts_with("gpt-5") {
            return vec![Rule::Tiles {
                base: 70,
                tile: 140,
            }];
        }
        if ["gpt-", "o1", "o3", "chatgpt"]
            .iter()
            .any(|p| m.starts_with(p))
        {
            return vec![Rule::Tiles {
                base: 85,
                tile: 170,
            }];
        }
        if m.starts_with("claude") {
            return vec![Rule::Area];
        }
        if m.starts_with("gemini-3") {
            return vec![Rule::GeminiFlat];
        }
        if m.starts_with("gemini") || m.starts_with("gemma") {
            return vec![Rule::GeminiTiles];
        }
    }
    match format {
        Some(ProviderFormat::OpenAi | ProviderFormat::OpenAiResponses) => {
            vec![Rule::Tiles {
                base: 85,
                tile: 170,
            }]
        }
        Some(ProviderFormat::Anthropic) => vec![Rule::Area],
        Some(ProviderFormat::Gemini) => vec![Rule::GeminiTiles, Rule::GeminiFlat],
        _ => vec![
            Rule::Tiles {
                base: 85,
                tile: 170,
            },
            Rule::Area,
            Rule::GeminiTiles,
            Rule::GeminiFlat,
        ],
    }
}

/// `(w, h)` scaled down by `factor` (at most 1), rounded, at least 1.
fn scaled(w: f64, h: f64, factor: f64) -> (f64, f64) {
    let f = factor.min(1.0);
    ((w * f).round().max(1.0), (h * f).round().max(1.0))
}

fn image_tokens(rule: Rule, size: Option<(u32, u32)>, low_detail: bool) -> u64 {
    match rule {
        Rule::Tiles { base, tile } => {
            if low_detail {
                return base;
            }
            let Some((w, h)) = size else {
                // The most tiles an image can have: 768 × 2048 → 2 × 4.
                return base + 8 * tile;
            };
            let (w, h) = (f64::from(w), f64::from(h));
            let (w, h) = scaled(w, h, 2048.0 / w.max(h));
            let (w, h) = scaled(w, h, 768.0 / w.min(h));
            let tiles = (w / 512.0).ceil() * (h / 512.0).ceil();
            base + tile * tiles as u64
        }
        Rule::Patches { multiplier } => {
            let patches = match size {
                None => 1536.0,
                Some((w, h)) => {
                    let (w, h) = (f64::from(w), f64::from(h));
                    let raw = (w / 32.0).ceil() * (h / 32.0).ceil();
                    if raw <= 1536.0 {
                        raw
                    } else {
                        // Scaled so the patches fit, whole patches across.
                        let shrink = (1536.0 * 1024.0 / (w * h)).sqrt();
                        let shrink = shrink
                            * ((w * shrink / 32.0).floor() / (w * shrink / 32.0))
                                .min((h * shrink / 32.0).floor() / (h * shrink / 32.0));
                        ((w * shrink / 32.0).ceil() * (h * shrink / 32.0).ceil()).min(1536.0)
                    }
                }
            };
            (patches * multiplier).ceil() as u64
        }
        Rule::Area => {
            let (w, h) = size.map_or((1568.0, 735.0), |(w, h)| (f64::from(w), f64::from(h)));
            let (w, h) = scaled(w, h, 1568.0 / w.max(h));
            let (w, h) = scaled(w, h, (1_192_464.0 / (w * h)).sqrt());
            (w * h / 750.0).ceil() as u64
        }
        Rule::GeminiTiles => match size {
            Some((w, h)) if w <= 384 && h <= 384 => 258,
            Some((w, h)) => 258 * u64::from(w.div_ceil(768)) * u64::from(h.div_ceil(768)),
            // A 3072-pixel square: 16 tiles.
            None => 258 * 16,
        },
        Rule::GeminiFlat => 1_120,
    }
}

fn page_tokens(rule: Rule) -> u64 {
    match rule {
        Rule::GeminiTiles => 258,
        Rule::GeminiFlat => 560,
        other => PDF_PAGE_TEXT_TOKENS + image_tokens(other, Some(PDF_PAGE_PIXELS), false),
    }
}

/// What `part` costs in `model`'s input tokens (or `format`'s provider's;
/// the most of any provider when neither says).
pub fn media_tokens(part: &MediaPart, format: Option<ProviderFormat>, model: Option<&str>) -> u64 {
    let size = part.width.zip(part.height);
    let low = part.detail.as_deref() == Some("low");
    rules(format, model)
        .into_iter()
        .map(|rule| match part.kind {
            MediaKind::Image => image_tokens(rule, size, low),
            MediaKind::File => {
                u64::from(part.pages.unwrap_or(UNKNOWN_PDF_PAGES)).saturating_mul(page_tokens(rule))
            }
        })
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(w: u32, h: u32) -> MediaPart {
        MediaPart {
            kind: MediaKind::Image,
            media_type: "image/png".into(),
            artifact: None,
            url: Some("https://example.com/a.png".into()),
            size_bytes: None,
            width: Some(w),
            height: Some(h),
            pages: None,
            filename: None,
            detail: None,
            tokens: None,
            data: None,
        }
    }

    /// The providers' own worked examples.
    #[test]
    fn published_examples() {
        // OpenAI: 1024×1024 high → 768×768, 4 tiles: 85 + 680 = 765.
        assert_eq!(media_tokens(&image(1024, 1024), None, Some("gpt-4o")), 765);
        // 2048×4096 → 1024×2048 → 768×1536, 6 tiles: 1105.
        assert_eq!(
            media_tokens(&image(2048, 4096), None, Some("gpt-4.1")),
            1105
        );
        let mut low = image(4096, 8192);
        low.detail = Some("low".into());
        assert_eq!(media_tokens(&low, None, Some("gpt-4o")), 85);
        // Patches: 1024×1024 → 32×32 = 1024 patches; gpt-4.1-mini ×1.62.
        assert_eq!(
            media_tokens(&image(1024, 1024), None, Some("gpt-4.1-mini")),
            1659
        );
        // 1800×2400 is scaled to fit 1,536 patches: at most 1,536 × 1.62.
        let big = media_tokens(&image(1800, 2400), None, Some("gpt-4.1-mini"));
        assert!(big <= 2489 && big > 2300, "{big}");
        // Anthropic: 1092×1092 is ~1,590 tokens (their table).
        assert_eq!(
            media_tokens(&image(1092, 1092), None, Some("claude-sonnet-4-5")),
            1590
        );
        // 200×200: 54.
        assert_eq!(
            media_tokens(&image(200, 200), Some(ProviderFormat::Anthropic), None),
            54
        );
        // Gemini 2.x: small 258, 1000×1000 → 2 × 2 tiles.
        assert_eq!(
            media_tokens(&image(300, 300), None, Some("gemini-2.5-flash")),
            258
        );
        assert_eq!(
            media_tokens(&image(1000, 1000), None, Some("gemini-2.5-pro")),
            1032
        );
        assert_eq!(
            media_tokens(&image(1000, 1000), None, Some("gemini-3-pro-preview")),
            1120
        );
    }

    #[test]
    fn without_a_model_the_most_any_provider_charges() {
        let part = image(1000, 1000);
        let all = media_tokens(&part, Some(ProviderFormat::AiSdk), None);
        for m in ["gpt-4o", "claude-opus-4", "gemini-2.5-pro", "gemini-3-pro"] {
            assert!(all >= media_tokens(&part, None, Some(m)), "{m}");
        }
        let mut url_only = image(1, 1);
        url_only.width = None;
        url_only.height = None;
        assert!(media_tokens(&url_only, Some(ProviderFormat::Anthropic), None) >= 1536);
    }

    #[test]
    fn pdf_pages_cost_text_and_an_image_each() {
        let mut pdf = image(0, 0);
        pdf.kind = MediaKind::File;
        pdf.media_type = "application/pdf".into();
        pdf.width = None;
        pdf.height = None;
        pdf.pages = Some(3);
        let claude = media_tokens(&pdf, None, Some("claude-sonnet-4-5"));
        assert_eq!(
            claude,
            3 * (3000 + image_tokens(Rule::Area, Some(PDF_PAGE_PIXELS), false))
        );
        assert_eq!(media_tokens(&pdf, None, Some("gemini-2.0-flash")), 3 * 258);
        pdf.pages = None;
        assert_eq!(media_tokens(&pdf, None, Some("gemini-3-flash")), 10 * 560);
    }
}
