//! Images and files a provider refuses (issue 48, item 9): each provider's
//! published size, dimension and count limits are checker rules, each found
//! in a request that breaks it; and a compile never sends such a part: its
//! reference line goes instead, saying why, and `dropped` says so.
mod common;

use std::rc::Rc;

use base64::Engine;
use common::{block_on, session};
use context_compiler::clock::SystemClock;
use context_compiler::media::{attach, AttachOptions};
use context_compiler::working_context::checker::check_request;
use context_compiler::working_context::DropAction;
use context_compiler::{
    CompileOptions, ContextCompiler, HistorySelector, Layout, MemoryArtifactStore, ProviderFormat,
};
use serde_json::{json, Value};

/// A PNG of `width` x `height` pixels as far as its header says, `len`
/// bytes long in all (its pixel data is not read by anyone here).
fn png(width: u32, height: u32, len: usize) -> Vec<u8> {
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    bytes.extend_from_slice(&width.to_be_bytes());
    bytes.extend_from_slice(&height.to_be_bytes());
    bytes.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
    bytes.resize(len.max(bytes.len()), 0);
    bytes
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn rules(request: &Value, format: ProviderFormat) -> Vec<(&'static str, String)> {
    check_request(request, format)
        .into_iter()
        .map(|v| (v.rule, v.path))
        .collect()
}

fn anthropic_image(data: &str) -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}})
}

#[test]
fn each_media_rule_is_found_where_it_breaks() {
    let small = b64(&png(100, 100, 200));
    // anthropic.image_dimensions: 9000 x 9000; anthropic.image_bytes: 6.4 MB of base64.
    let request = json!({"messages": [{"role": "user", "content": [
        {"type": "text", "text": "What are these?"},
        anthropic_image(&b64(&png(9000, 9000, 300))),
        anthropic_image(&b64(&png(100, 100, 4_800_000))),
        anthropic_image(&small),
    ]}]});
    assert_eq!(
        rules(&request, ProviderFormat::Anthropic),
        [
            (
                "anthropic.image_dimensions",
                "/messages/0/content/1".to_string()
            ),
            ("anthropic.image_bytes", "/messages/0/content/2".to_string()),
        ]
    );
    // anthropic.images_per_request: 101 images sent, the oldest is over; and
    // with more than 20 images, 2,000 pixels a side.
    let mut blocks = vec![anthropic_image(&b64(&png(2500, 100, 200)))];
    blocks.extend((0..101).map(|_| anthropic_image(&small)));
    let crowd = json!({"messages": [{"role": "user", "content": blocks}]});
    let found = rules(&crowd, ProviderFormat::Anthropic);
    assert!(
        found.contains(&("anthropic.image_dimensions", "/messages/0/content/0".into())),
        "{found:?}"
    );
    assert!(
        found.contains(&(
            "anthropic.images_per_request",
            "/messages/0/content/1".into()
        )),
        "{found:?}"
    );
    // anthropic.document_pages: a 120-page PDF (its page tree says so).
    let pdf = b"%PDF-1.4\n1 0 obj << /Type /Pages /Count 120 /Kids [] >>\n";
    let document = json!({"messages": [{"role": "user", "content": [
        {"type": "text", "text": "Summarise"},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": b64(pdf)}},
    ]}]});
    assert_eq!(
        rules(&document, ProviderFormat::Anthropic),
        [(
            "anthropic.document_pages",
            "/messages/0/content/1".to_string()
        )]
    );
    // openai.image_bytes: 2 x 30 MB of images; the older is over.
    let heavy = format!("data:image/png;base64,{}", b64(&png(100, 100, 30_000_000)));
    let openai = json!([{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": heavy}},
        {"type": "image_url", "image_url": {"url": heavy}},
    ]}]);
    assert_eq!(
        rules(&openai, ProviderFormat::OpenAi),
        [("openai.image_bytes", "/0/content/0".to_string())]
    );
    // openai.images_per_request: 501 images.
    let url = format!("data:image/png;base64,{small}");
    let many: Vec<Value> = (0..501)
        .map(|_| json!({"type": "image_url", "image_url": {"url": url}}))
        .collect();
    let found = rules(
        &json!([{"role": "user", "content": many}]),
        ProviderFormat::OpenAi,
    );
    assert_eq!(
        found,
        [("openai.images_per_request", "/0/content/0".to_string())]
    );
    // openai.file_pages (Responses): two 60-page PDFs.
    let deck = std::fs::read(format!(
        "{}/tests/fixtures/media/deck-objstm.pdf",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let file = json!({"type": "input_file", "filename": "deck.pdf", "file_data": format!("data:application/pdf;base64,{}", b64(&deck))});
    let responses =
        json!({"input": [{"type": "message", "role": "user", "content": [file, file]}]});
    assert_eq!(
        rules(&responses, ProviderFormat::OpenAiResponses),
        [("openai.file_pages", "/input/0/content/0".to_string())]
    );
    // gemini.inline_bytes: 2 x 12 MB inline.
    let inline = b64(&png(100, 100, 9_000_000));
    let gemini = json!({"contents": [{"role": "user", "parts": [
        {"inlineData": {"mimeType": "image/png", "data": inline}},
        {"inlineData": {"mimeType": "image/png", "data": inline}},
    ]}]});
    assert_eq!(
        rules(&gemini, ProviderFormat::Gemini),
        [("gemini.inline_bytes", "/contents/0/parts/0".to_string())]
    );
}

/// A compile never sends what its provider refuses: a 9000 x 9000 PNG and
/// one of 6.4 MB of base64 become reference lines saying why, `dropped`
/// says so, and the request passes the checker. The one the provider takes
/// is sent.
#[test]
fn a_compile_sends_the_reference_of_a_part_its_provider_refuses() {
    let store = Rc::new(MemoryArtifactStore::new(Rc::new(SystemClock)));
    let part = |bytes: Vec<u8>| {
        serde_json::to_value(
            block_on(attach(store.as_ref(), &bytes, AttachOptions::default())).unwrap(),
        )
        .unwrap()
    };
    let mut s = session("refused");
    s.record(
        "user_input",
        json!({"text": "What do these show?", "media": [part(png(9000, 9000, 300)), part(png(100, 100, 4_800_000)), part(png(120, 80, 400))]}),
        None,
    )
    .unwrap();
    let compiler =
        ContextCompiler::with_layout(vec![Rc::new(HistorySelector::default())], Layout::Zoned)
            .with_media_store(store.clone());
    let mut options = CompileOptions::new("You describe images.");
    options.format = Some(ProviderFormat::Anthropic);
    let ctx = block_on(compiler.compile_with(&mut s, 100_000, &options)).unwrap();
    let refused: Vec<_> = ctx
        .dropped
        .iter()
        .filter(|d| d.action == DropAction::Refused)
        .collect();
    assert_eq!(
        refused.len(),
        1,
        "one message lost two parts: {:?}",
        ctx.dropped
    );
    let request = ctx.to_provider_messages(ProviderFormat::Anthropic);
    assert!(check_request(&request, ProviderFormat::Anthropic).is_empty());
    let blocks = request["messages"][0]["content"].as_array().unwrap();
    assert_eq!(blocks.iter().filter(|b| b["type"] == "image").count(), 1);
    let text = blocks[0]["text"].as_str().unwrap();
    assert!(
        text.contains("9000x9000")
            && text.contains("not sent: Anthropic takes images of at most 8000 pixels"),
        "{text}"
    );
    assert!(
        text.contains("not sent: Anthropic takes images of at most 5242880 bytes of base64"),
        "{text}"
    );
    // Rendered in another format than it was compiled for, the renderer
    // still keeps that format's limits.
    for format in ProviderFormat::ALL {
        let request = ctx.to_provider_messages(format);
        assert!(
            check_request(&request, format).is_empty(),
            "{}",
            format.as_str()
        );
    }
}
