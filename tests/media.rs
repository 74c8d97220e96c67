//! Images and files (issue 36, item 5): stored in the artifact store,
//! named by events (never inlined), counted by each provider's rule for the
//! compile's model, read back by the async compile and rendered in every
//! format, taken out of the context first under pressure.
mod common;

use std::rc::Rc;

use base64::Engine;
use common::{block_on, session};
use context_compiler::clock::SystemClock;
use context_compiler::media::{attach, AttachOptions, MediaPart};
use context_compiler::tools::{
    AbortSignal, ToolBridge, ToolFailure, ToolInterruptOptions, ToolOutput,
};
use context_compiler::working_context::checker::check_request;
use context_compiler::working_context::DropAction;
use context_compiler::{
    ArtifactStore, CompileOptions, ContextCompiler, DefaultTokenCounter, ErrorCode,
    HistorySelector, Layout, MemoryArtifactStore, ProviderFormat, Session, WorkingContext,
};
use serde_json::{json, Value};

const CHART: &[u8] = include_bytes!("fixtures/media/chart.png");
const REPORT: &[u8] = include_bytes!("fixtures/media/report.pdf");

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn compiler(store: Rc<MemoryArtifactStore>) -> ContextCompiler {
    ContextCompiler::with_layout(vec![Rc::new(HistorySelector::default())], Layout::Zoned)
        .with_media_store(store)
}

fn compile(
    s: &mut Session,
    store: Rc<MemoryArtifactStore>,
    budget: u64,
    format: Option<ProviderFormat>,
    model: Option<&str>,
) -> WorkingContext {
    let options = CompileOptions {
        format,
        model: model.map(str::to_string),
        ..CompileOptions::new("You are an SRE.")
    };
    block_on(compiler(store).compile_with(s, budget, &options)).expect("compile")
}

fn attached(store: &MemoryArtifactStore, bytes: &[u8]) -> MediaPart {
    block_on(attach(
        store,
        bytes,
        AttachOptions {
            source: "user".into(),
            ..AttachOptions::default()
        },
    ))
    .expect("attach")
}

/// A session whose question carries the chart and the report.
fn asked(store: &MemoryArtifactStore) -> (Session, MediaPart, MediaPart) {
    let chart = attached(store, CHART);
    let report = attached(store, REPORT);
    let mut s = session("media");
    s.record(
        "user_input",
        json!({"text": "What do these show?", "media": [chart, report]}),
        None,
    )
    .expect("record");
    (s, chart, report)
}

#[test]
fn attach_reads_what_the_cost_depends_on() {
    let store = MemoryArtifactStore::new(Rc::new(SystemClock));
    let chart = attached(&store, CHART);
    assert_eq!((chart.width, chart.height), (Some(1024), Some(768)));
    assert_eq!(chart.media_type, "image/png");
    let report = attached(&store, REPORT);
    assert_eq!(
        (report.media_type.as_str(), report.pages),
        ("application/pdf", Some(2))
    );
    assert!(block_on(store.exists(chart.artifact.as_deref().unwrap())).unwrap());
    let text = block_on(attach(&store, b"plain words", AttachOptions::default())).unwrap_err();
    assert_eq!(text.code(), ErrorCode::InvalidArgument);
    let broken = block_on(attach(&store, &CHART[..20], AttachOptions::default())).unwrap_err();
    assert_eq!(broken.code(), ErrorCode::InvalidArgument, "{broken}");
}

#[test]
fn events_name_media_and_never_hold_its_bytes() {
    let mut s = session("media");
    let inline = json!({"text": "see", "media": [{"type": "image", "mediaType": "image/png", "data": b64(CHART)}]});
    let e = s.record("user_input", inline, None).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert!(e.message().contains("attachMedia"), "{e}");
    assert_eq!(s.event_log().len(), 0, "nothing recorded");
    let by_url = json!({"text": "see", "media": [{"type": "image", "mediaType": "image/png", "url": "https://example.com/a.png"}]});
    s.record("user_input", by_url, None)
        .expect("a URL is a place");
    let store = Rc::new(MemoryArtifactStore::new(Rc::new(SystemClock)));
    let (s, ..) = asked(&store);
    let saved = serde_json::to_string(s.event_log().events()).unwrap();
    assert!(
        !saved.contains(&b64(CHART)[..64]),
        "the session holds no base64"
    );
}

#[test]
fn each_format_sends_the_bytes_as_it_takes_them() {
    let store = Rc::new(MemoryArtifactStore::new(Rc::new(SystemClock)));
    let (mut s, ..) = asked(&store);
    let ctx = compile(&mut s, store.clone(), 60_000, None, None);
    let chart = b64(CHART);
    let report = b64(REPORT);
    let expect: [(ProviderFormat, Value, Value); 5] = [
        (
            ProviderFormat::OpenAi,
            json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{chart}")}}),
            json!({"type": "file", "file": {"filename": "", "file_data": format!("data:application/pdf;base64,{report}")}}),
        ),
        (
            ProviderFormat::OpenAiResponses,
            json!({"type": "input_image", "image_url": format!("data:image/png;base64,{chart}"), "detail": "auto"}),
            json!({"type": "input_file", "filename": "", "file_data": format!("data:application/pdf;base64,{report}")}),
        ),
        (
            ProviderFormat::Anthropic,
            json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": chart}}),
            json!({"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": report}}),
        ),
        (
            ProviderFormat::Gemini,
            json!({"inlineData": {"mimeType": "image/png", "data": chart}}),
            json!({"inlineData": {"mimeType": "application/pdf", "data": report}}),
        ),
        (
            ProviderFormat::AiSdk,
            json!({"type": "image", "image": chart, "mediaType": "image/png"}),
            json!({"type": "file", "data": report, "mediaType": "application/pdf", "filename": ""}),
        ),
    ];
    for (format, image, file) in expect {
        let request = ctx.to_provider_messages(format);
        let text = request.to_string();
        let mut found = (false, false);
        visit(&request, &mut |v| {
            let mut v = v.clone();
            strip_filename(&mut v);
            let (mut i, mut f) = (image.clone(), file.clone());
            strip_filename(&mut i);
            strip_filename(&mut f);
            found.0 |= v == i;
            found.1 |= v == f;
        });
        assert_eq!(found, (true, true), "{format:?}: {text:.600}");
        let broken = check_request(&request, format);
        assert!(broken.is_empty(), "{format:?}: {broken:?}");
    }
    // The plain form names them; it never inlines base64.
    let plain = ctx.to_provider_messages(ProviderFormat::Plain).to_string();
    assert!(
        plain.contains("[image image/png, 1024x768: artifact "),
        "{plain}"
    );
    assert!(!plain.contains(&chart[..64]));
}

/// A file name is the artifact's and a cache mark the request's: left out
/// of the comparison.
fn strip_filename(v: &mut Value) {
    if let Some(o) = v.as_object_mut() {
        o.remove("cache_control");
        if o.contains_key("filename") {
            o.insert("filename".into(), json!(""));
        }
        for (_, inner) in o.iter_mut() {
            strip_filename(inner);
        }
    }
}

fn visit(v: &Value, f: &mut dyn FnMut(&Value)) {
    f(v);
    match v {
        Value::Array(a) => a.iter().for_each(|x| visit(x, f)),
        Value::Object(o) => o.values().for_each(|x| visit(x, f)),
        _ => {}
    }
}

#[test]
fn media_is_counted_by_the_models_rule() {
    let store = Rc::new(MemoryArtifactStore::new(Rc::new(SystemClock)));
    let (mut s, chart, report) = asked(&store);
    let mut text_only = session("media");
    text_only
        .record("user_input", json!({"text": "What do these show?"}), None)
        .unwrap();
    let base = compile(&mut text_only, store.clone(), 60_000, None, None).token_count;
    for model in [
        "gpt-4.1",
        "claude-sonnet-4-5",
        "gemini-2.5-pro",
        "gpt-4.1-mini",
    ] {
        let ctx = compile(&mut s, store.clone(), 60_000, None, Some(model));
        let expected = context_compiler::media::cost::media_tokens(&chart, None, Some(model))
            + context_compiler::media::cost::media_tokens(&report, None, Some(model));
        assert_eq!(ctx.token_count, ctx.exact_token_count(&DefaultTokenCounter));
        // The parts' cost, and a line naming each in the plain text.
        let added = ctx.token_count - base;
        assert!(
            (expected..expected + 120).contains(&added),
            "{model}: {added} for {expected}"
        );
    }
    // 1024×768 on GPT-4.1: 768×576 → 2×2 tiles = 765; on Claude: 1049.
    let gpt = compile(&mut s, store.clone(), 60_000, None, Some("gpt-4.1"));
    assert_eq!(gpt.history[0].media[0].tokens, Some(765));
    let claude = compile(&mut s, store, 60_000, None, Some("claude-opus-4-1"));
    assert_eq!(claude.history[0].media[0].tokens, Some(1049));
}

struct Screenshots;

#[async_trait::async_trait(?Send)]
impl ToolBridge for Screenshots {
    async fn execute(
        &self,
        _name: &str,
        _arguments: &Value,
        _signal: &AbortSignal,
        _deadline_ms: f64,
    ) -> Result<ToolOutput, ToolFailure> {
        Ok(ToolOutput::Bytes(CHART.to_vec()))
    }
}

/// A session where a tool returned the chart as bytes `calls` times.
fn screenshotted(store: Rc<MemoryArtifactStore>, calls: usize) -> Rc<std::cell::RefCell<Session>> {
    let shared = Rc::new(std::cell::RefCell::new(session("shots")));
    shared
        .borrow_mut()
        .record("user_input", json!({"text": "Take a screenshot."}), None)
        .unwrap();
    let options = ToolInterruptOptions {
        artifact_store: Some(store),
        ..ToolInterruptOptions::default()
    };
    let handler = common::tool_handler(Rc::new(Screenshots), &shared, options);
    for _ in 0..calls {
        block_on(handler.call("screenshot", json!({}), None)).expect("call");
    }
    shared
}

#[test]
fn a_tools_image_goes_to_the_model_as_an_image() {
    let store = Rc::new(MemoryArtifactStore::new(Rc::new(SystemClock)));
    let shared = screenshotted(store.clone(), 1);
    let mut s = shared.borrow_mut();
    let outcome = s.event_log().events().last().unwrap().data.clone();
    assert_eq!(outcome["media"][0]["width"], 1024);
    let ctx = compile(&mut s, store, 60_000, None, None);
    let chart = b64(CHART);
    // Anthropic: in the tool_result.
    let a = ctx.to_provider_messages(ProviderFormat::Anthropic);
    let result = a["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|b| b["type"] == "tool_result")
        .expect("tool_result");
    assert_eq!(result["content"][1]["source"]["data"], chart);
    // Chat Completions: a tool message is text only; the image follows.
    let o = ctx.to_provider_messages(ProviderFormat::OpenAi);
    let messages = o.as_array().unwrap();
    let at = messages.iter().position(|m| m["role"] == "tool").unwrap();
    let said = messages[at]["content"].as_str().unwrap();
    assert!(
        said.contains("in the user message after the tool results"),
        "{said}"
    );
    assert_eq!(messages[at + 1]["role"], "user");
    assert_eq!(
        messages[at + 1]["content"][1]["image_url"]["url"],
        format!("data:image/png;base64,{chart}")
    );
    for format in ProviderFormat::ALL {
        let request = ctx.to_provider_messages(format);
        assert!(
            check_request(&request, format).is_empty(),
            "{format:?}: {request}"
        );
    }
}

#[test]
fn under_pressure_older_images_leave_first_and_the_budget_holds() {
    let store = Rc::new(MemoryArtifactStore::new(Rc::new(SystemClock)));
    let shared = screenshotted(store.clone(), 12);
    let mut s = shared.borrow_mut();
    // Twelve screenshots at ~1,049 tokens each on Claude do not fit 6,000.
    let ctx = compile(
        &mut s,
        store,
        6_000,
        Some(ProviderFormat::Anthropic),
        Some("claude-sonnet-4-5"),
    );
    assert!(ctx.token_count <= 6_000, "{}", ctx.token_count);
    assert_eq!(ctx.token_count, ctx.exact_token_count(&DefaultTokenCounter));
    let with_media: Vec<usize> = (0..ctx.history.len())
        .filter(|&i| !ctx.history[i].media.is_empty())
        .collect();
    assert!(
        !with_media.is_empty() && with_media.len() < 12,
        "{with_media:?}"
    );
    // The images kept are the newest.
    let results: Vec<usize> = (0..ctx.history.len())
        .filter(|&i| ctx.history[i].is_tool_result())
        .collect();
    assert_eq!(with_media, results[results.len() - with_media.len()..]);
    assert!(ctx.dropped.iter().any(|d| d.action == DropAction::Masked));
    let request = ctx.to_provider_messages(ProviderFormat::Anthropic);
    assert!(check_request(&request, ProviderFormat::Anthropic).is_empty());
}

#[test]
fn without_its_bytes_a_part_is_named_not_sent() {
    let store = Rc::new(MemoryArtifactStore::new(Rc::new(SystemClock)));
    let (mut s, chart, _) = asked(&store);
    let empty = Rc::new(MemoryArtifactStore::new(Rc::new(SystemClock)));
    let ctx = compile(&mut s, empty, 60_000, None, None);
    let request = ctx
        .to_provider_messages(ProviderFormat::Anthropic)
        .to_string();
    assert!(request.contains(&format!("artifact {}", chart.artifact.unwrap())));
    assert!(!request.contains("\"base64\""));
}

#[test]
fn a_part_naming_bytes_of_another_type_is_named_not_sent() {
    let store = Rc::new(MemoryArtifactStore::new(Rc::new(SystemClock)));
    let handle = block_on(store.store(
        b"not an image at all",
        "user",
        context_compiler::StoreOptions::default(),
    ))
    .unwrap();
    let mut s = session("media");
    let part = json!({"type": "image", "mediaType": "image/png", "artifact": handle.artifact_id, "width": 10, "height": 10});
    s.record("user_input", json!({"text": "see", "media": [part]}), None)
        .unwrap();
    let ctx = compile(&mut s, store, 10_000, None, None);
    for format in ProviderFormat::ALL {
        let request = ctx.to_provider_messages(format);
        assert!(!request.to_string().contains("base64,"), "{format:?}");
        assert!(
            request.to_string().contains(&handle.artifact_id),
            "{format:?}"
        );
        assert!(check_request(&request, format).is_empty(), "{format:?}");
    }
}

#[test]
fn the_single_system_layout_sends_a_users_image_too() {
    let store = Rc::new(MemoryArtifactStore::new(Rc::new(SystemClock)));
    let (mut s, ..) = asked(&store);
    let compiler =
        ContextCompiler::new(vec![Rc::new(HistorySelector::default())]).with_media_store(store);
    let options = CompileOptions {
        model: Some("claude-sonnet-4-5".into()),
        ..CompileOptions::new("You are an SRE.")
    };
    let ctx = block_on(compiler.compile_with(&mut s, 60_000, &options)).expect("compile");
    assert_eq!(ctx.history[0].media[0].tokens, Some(1049));
    let request = ctx.to_provider_messages(ProviderFormat::Anthropic);
    assert_eq!(request["messages"][0]["content"][1]["type"], "image");
    // At a budget the image does not fit beside the text, it leaves first.
    let tight = block_on(compiler.compile_with(&mut s, 1_000, &options)).expect("compile");
    assert!(tight.token_count <= 1_000);
    assert!(
        tight.history.iter().all(|m| m.media.is_empty()),
        "{:?} {:?}",
        tight.history,
        tight.dropped
    );
    assert!(tight.history[0].content.contains("What do these show?"));
}

/// A 60-page PDF as writers make them (fpdf2, then qpdf through pikepdf:
/// uncompressed, compressed object streams, linearised): counted as 60
/// pages whichever way its page tree is stored, and priced so (it was
/// counted as 1 when its pages were in object streams).
#[test]
fn a_pdf_counts_its_pages_however_it_was_written() {
    for name in ["deck-plain.pdf", "deck-objstm.pdf", "deck-linearized.pdf"] {
        let bytes = std::fs::read(format!(
            "{}/tests/fixtures/media/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        assert_eq!(context_compiler::media::pdf_pages(&bytes), 60, "{name}");
        let part = context_compiler::media::describe(&bytes, None).unwrap();
        assert_eq!(part.pages, Some(60), "{name}");
    }
}
