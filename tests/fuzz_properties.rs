//! Fuzzing on stable Rust: property tests over generated hostile input for
//! every parser and entry point that takes outside data (`redact`, the
//! aligner, session and event import, KV records, SQL rows, PDFs, image
//! headers, the record wire format), with mutated real files as seeds
//! (`tests/fixtures/media/`, `tests/fixtures/fuzz/`; the edits are in
//! `tests/fuzz/mutate.rs`). Invariants: no panic, spans in bounds, what is
//! exported imports back byte for byte, and a malformed input is its
//! documented error code (asserted, not just "no panic"). `FUZZ_CASES`
//! scales the run (default 512 cases a target; `npm test` runs the
//! default, a few seconds; `npm run fuzz` runs 20,000). The JS value
//! converters and the wasm32 build are fuzzed by
//! `tests/js/fuzz_converters.test.mjs`.
//! Counterexamples proptest finds are kept in
//! `tests/fuzz_properties.proptest-regressions` and replayed first.
mod common;
#[path = "fuzz/mutate.rs"]
mod mutate;
#[path = "fuzz/sql.rs"]
mod sql;
// The record wire format's decoder, compiled here from the npm module's
// source (a `cdylib` no test links).
#[path = "../crates/npm-wasm/src/tape.rs"]
mod tape;

use std::cell::RefCell;
use std::rc::Rc;

use common::{block_on, session, StepClock};
use context_compiler::clock::SystemClock;
use context_compiler::kv::{KvArtifactStore, KvStoreOptions, MemoryKv};
use context_compiler::media::{describe, MediaKind, PDF};
use context_compiler::normalize::aligner::PerceptionAligner;
use context_compiler::normalize::redact::redact;
use context_compiler::session::{SessionEnv, SessionStore};
use context_compiler::tokens::DefaultTokenCounter;
use context_compiler::ErrorCode;
use context_compiler::{DefaultTokenCounter as Counter, Session};
use mutate::{apply, edits, fixture, IMAGE_TOKENS, PDF_TOKENS};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{json, Value};

fn cases() -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512)
}

/// Pieces the parsers care about: quotes, escapes, separators, brackets,
/// key words, token prefixes, PEM armour, non-ASCII and control characters.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("\"".to_string()),
        Just("\\".to_string()),
        Just("\\\"".to_string()),
        Just("\\u00".to_string()),
        Just("\\ud800".to_string()),
        Just(":".to_string()),
        Just("=".to_string()),
        Just(",".to_string()),
        Just("{".to_string()),
        Just("}".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just("\n".to_string()),
        Just("'".to_string()),
        Just("password".to_string()),
        Just("api_key".to_string()),
        Just("token".to_string()),
        Just("Bearer ".to_string()),
        Just("sk-".to_string()),
        Just("ghp_".to_string()),
        Just("eyJ".to_string()),
        Just("-----BEGIN RSA PRIVATE KEY-----".to_string()),
        Just("-----END RSA PRIVATE KEY-----".to_string()),
        Just("://".to_string()),
        Just("@".to_string()),
        Just("null".to_string()),
        Just("é😀\u{0}\u{7f}".to_string()),
        "[A-Za-z0-9_+/=.-]{1,40}",
        "\\PC{0,8}",
    ]
}

fn hostile_text() -> impl Strategy<Value = String> {
    prop::collection::vec(fragment(), 0..40).prop_map(|parts| parts.concat())
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        hostile_text().prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(hostile_text(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn redact_never_panics_and_its_spans_are_in_bounds(text in hostile_text()) {
        let r = redact(&text);
        let mut last_end = 0;
        for f in &r.findings {
            prop_assert!(f.start < f.end && f.end <= text.len());
            prop_assert!(text.is_char_boundary(f.start) && text.is_char_boundary(f.end));
            prop_assert!(f.start >= last_end, "findings overlap");
            last_end = f.end;
        }
    }

    #[test]
    fn redacted_json_stays_valid(doc in json_value()) {
        let text = doc.to_string();
        let r = redact(&text);
        prop_assert!(
            serde_json::from_str::<Value>(&r.text).is_ok(),
            "{} -> {}", text, r.text
        );
    }

    #[test]
    fn the_aligner_never_panics(text in hostile_text(), as_json in json_value()) {
        let aligner = PerceptionAligner::default();
        let out = aligner.normalize("tool", &text);
        prop_assert!(out.summary_concise.chars().count() <= 200);
        let out = aligner.normalize("tool", &as_json.to_string());
        prop_assert!(out.is_json);
    }

    #[test]
    fn import_never_panics_on_hostile_documents(text in hostile_text(), doc in json_value()) {
        let counter = Rc::new(Counter);
        let _ = Session::import_json(&text, Rc::new(SystemClock), counter.clone(), 1);
        let wrapped = json!({"format": context_compiler::session::SESSION_FORMAT, "version": 1,
                             "sessionId": "s", "events": [doc]});
        let _ = Session::import_json(&wrapped.to_string(), Rc::new(SystemClock), counter, 1);
    }

    #[test]
    fn export_then_import_gives_the_same_bytes(
        events in prop::collection::vec(("[a-z_]{1,12}", json_value()), 0..12)
    ) {
        let mut s = session("fuzz");
        for (kind, data) in events {
            s.record(&kind, data, None).unwrap();
        }
        let exported = s.export_json();
        let back = Session::import_json(&exported, Rc::new(SystemClock), Rc::new(Counter), 1)
            .unwrap();
        prop_assert_eq!(back.export_json(), exported);
    }

    #[test]
    fn damaged_kv_records_are_errors_never_panics(
        damage in prop::collection::vec((any::<prop::sample::Index>(), prop::collection::vec(any::<u8>(), 0..64), 0usize..3), 1..4)
    ) {
        block_on(async {
            let store = KvArtifactStore::new(
                MemoryKv::new(),
                StepClock::new(1000.0, 1.0),
                KvStoreOptions { chunk_bytes: 4096, prefix: String::new(), timeout_ms: None },
            )
            .unwrap();
            let s = RefCell::new(session("kv"));
            for i in 0..5 {
                s.borrow_mut().record("user_input", json!(format!("turn {i}")), None).unwrap();
            }
            store.save_session(&s).await.unwrap();
            let stored = context_compiler::artifacts::ArtifactStore::store(
                &store, &[7u8; 9000], "src", Default::default()).await.unwrap();
            // (9,000 bytes: a record and three chunks for damage to hit.)
            let keys = store.kv().keys();
            for (index, bytes, how) in &damage {
                let key = index.get(&keys);
                let mut value = store.kv().raw_get(key).unwrap_or_default();
                match how {
                    0 => value = bytes.clone(),
                    1 => value.truncate(bytes.len().min(value.len())),
                    _ => value.extend_from_slice(bytes),
                }
                store.kv().raw_put(key, value);
            }
            let env = SessionEnv {
                clock: Rc::new(SystemClock),
                counter: Rc::new(DefaultTokenCounter),
                seed: 1,
            };
            let outcomes = [
                store.load_session("kv", env).await.map(drop),
                context_compiler::artifacts::ArtifactStore::retrieve(&store, &stored.artifact_id).await.map(drop),
                context_compiler::artifacts::ArtifactStore::list_handles(&store, None).await.map(drop),
            ];
            for e in outcomes.into_iter().filter_map(|o| o.err()) {
                prop_assert!(
                    matches!(e.code(), ErrorCode::StoreCorrupt | ErrorCode::ArtifactIntegrity
                        | ErrorCode::ArtifactIncomplete | ErrorCode::InvalidSessionImport),
                    "{:?}: {}", e.code(), e
                );
            }
            Ok(())
        })?;
    }
}

/// The PDFs the page counter's target mutates.
const PDF_SEEDS: &[&str] = &[
    "media/report.pdf",
    "media/deck-plain.pdf",
    "media/deck-objstm.pdf",
    "media/deck-linearized.pdf",
    "fuzz/length-overflow.pdf",
    "fuzz/two-streams.pdf",
];

/// The images the header target mutates, and their types.
const IMAGE_SEEDS: &[(&str, &str)] = &[
    ("media/icon.png", "image/png"),
    ("media/chart.png", "image/png"),
    ("fuzz/tiny.gif", "image/gif"),
    ("fuzz/tiny.jpg", "image/jpeg"),
    ("fuzz/tiny.webp", "image/webp"),
    ("fuzz/lossless.webp", "image/webp"),
];

/// What JSON text holds, and values at the limits the import checks.
const JSON_TOKENS: &[&[u8]] = &[
    b"\"eventId\":\"\"",
    b"\"timestamp\":1e400",
    b"\"timestamp\":-1",
    b"\"timestamp\":8640000000000001",
    b"\"tokenEstimate\":9007199254740993",
    b"\"tokenEstimate\":-5",
    b"\"kind\":\"\"",
    b"\"data\":",
    b"\"media\":[{}]",
    b"\"\\ud800\"",
    b"\"__proto__\":",
    b"null",
    b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"\"",
];

/// The tape a JS encoder (`js/record.js`) writes for `v`.
fn encode(v: &Value, tape: &mut Vec<f64>, payload: &mut String) {
    fn string(s: &str, tape: &mut Vec<f64>, payload: &mut String) {
        tape.push(s.encode_utf16().count() as f64);
        payload.push_str(s);
    }
    match v {
        Value::Null => tape.push(0.0),
        Value::Bool(b) => tape.push(if *b { 2.0 } else { 1.0 }),
        Value::Number(n) => tape.extend([3.0, n.as_f64().unwrap_or(0.0)]),
        Value::String(s) => {
            tape.push(4.0);
            string(s, tape, payload);
        }
        Value::Array(items) => {
            tape.extend([5.0, items.len() as f64]);
            for item in items {
                encode(item, tape, payload);
            }
        }
        Value::Object(map) => {
            tape.extend([6.0, map.len() as f64]);
            for (k, item) in map {
                string(k, tape, payload);
                encode(item, tape, payload);
            }
        }
    }
}

/// A number for a tape slot: tags, lengths, and values no length may be.
fn slot() -> impl Strategy<Value = f64> {
    prop_oneof![
        (0u8..8).prop_map(f64::from),
        Just(-1.0),
        Just(0.5),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(4_294_967_296.0),
        Just(9_007_199_254_740_993.0),
        Just(1e300),
        any::<f64>(),
    ]
}

/// One edit of a tape: a slot replaced, inserted or deleted.
fn tape_edits() -> impl Strategy<Value = Vec<(Index, f64, u8)>> {
    prop::collection::vec((any::<Index>(), slot(), 0u8..3), 0..6)
}

fn edit_tape(tape: &mut Vec<f64>, edits: &[(Index, f64, u8)]) {
    for (i, v, how) in edits {
        match how {
            0 if !tape.is_empty() => {
                let j = i.index(tape.len());
                tape[j] = *v;
            }
            1 => {
                let j = i.index(tape.len() + 1);
                tape.insert(j, *v);
            }
            _ if !tape.is_empty() => {
                tape.remove(i.index(tape.len()));
            }
            _ => {}
        }
    }
}

fn seeds(names: &[&str]) -> Vec<Vec<u8>> {
    names.iter().map(|n| fixture(n)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// The seeds are what their names say (a mutated seed then tests the
    /// parser past its first check).
    #[test]
    fn the_seeds_read(_n in 0..1) {
        let pages: Vec<u32> = seeds(PDF_SEEDS).iter().map(|b| context_compiler::media::pdf_pages(b)).collect();
        prop_assert_eq!(pages, vec![2, 60, 60, 60, 1, 3]);
        for (name, mime) in IMAGE_SEEDS {
            let part = describe(&fixture(name), None).map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?;
            prop_assert_eq!(&part.media_type, mime);
            prop_assert!(part.width.is_some_and(|w| w > 0), "{}", name);
        }
        let text = String::from_utf8(fixture("fuzz/session.json")).unwrap_or_default();
        let imported = Session::import_json(&text, Rc::new(SystemClock), Rc::new(Counter), 1)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(imported.event_log().len(), 4);
    }

    /// A mutated PDF is counted (at least a page) whatever it holds; an
    /// undeclared one that no longer sniffs as a PDF is INVALID_ARGUMENT.
    #[test]
    fn pdf_pages_on_mutated_pdfs(seed in any::<Index>(), edits in edits(8)) {
        thread_local!(static PDFS: Vec<Vec<u8>> = seeds(PDF_SEEDS));
        let bytes = PDFS.with(|s| apply(seed.get::<Vec<u8>>(s), &edits, PDF_TOKENS));
        let part = describe(&bytes, Some(PDF)).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(part.pages.is_some_and(|p| p >= 1));
        prop_assert_eq!(context_compiler::media::pdf_pages(&bytes), part.pages.unwrap_or(0));
        if let Err(e) = describe(&bytes, None) {
            prop_assert_eq!(e.code(), ErrorCode::InvalidArgument);
        }
    }

    /// A mutated image's header reads to a size, or the part is
    /// INVALID_ARGUMENT (declared or sniffed).
    #[test]
    fn image_headers_on_mutated_images(seed in any::<Index>(), edits in edits(6)) {
        thread_local!(static IMAGES: Vec<Vec<u8>> =
            IMAGE_SEEDS.iter().map(|(n, _)| fixture(n)).collect());
        let (_, mime) = seed.get(IMAGE_SEEDS);
        let bytes = IMAGES.with(|s| apply(seed.get::<Vec<u8>>(s), &edits, IMAGE_TOKENS));
        for declared in [Some(*mime), None] {
            match describe(&bytes, declared) {
                Ok(part) if part.kind == MediaKind::Image => {
                    prop_assert!(part.width.is_some() && part.height.is_some());
                }
                Ok(part) => prop_assert!(part.pages.is_some()),
                Err(e) => prop_assert_eq!(e.code(), ErrorCode::InvalidArgument, "{}", e),
            }
        }
    }

    /// A request carrying a mutated image and PDF as base64 (a caller's or
    /// a provider SDK's; `checkRequest` reads their sizes and pages): its
    /// check gives violations, never a panic, in each format that carries
    /// media by value.
    #[test]
    fn requests_with_mutated_media_are_checked(
        pdf in any::<Index>(),
        image in any::<Index>(),
        pdf_edits in edits(6),
        image_edits in edits(4),
    ) {
        use base64::Engine;
        use context_compiler::working_context::{checker::check_request, ProviderFormat};
        thread_local!(static PDFS: Vec<Vec<u8>> = seeds(PDF_SEEDS));
        thread_local!(static IMAGES: Vec<Vec<u8>> =
            IMAGE_SEEDS.iter().map(|(n, _)| fixture(n)).collect());
        let b64 = |b: Vec<u8>| base64::engine::general_purpose::STANDARD.encode(b);
        let doc = b64(PDFS.with(|s| apply(pdf.get::<Vec<u8>>(s), &pdf_edits, PDF_TOKENS)));
        let img = b64(IMAGES.with(|s| apply(image.get::<Vec<u8>>(s), &image_edits, IMAGE_TOKENS)));
        let openai = json!([{"role": "user", "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{img}")}},
            {"type": "file", "file": {"filename": "f.pdf", "file_data": format!("data:application/pdf;base64,{doc}")}},
        ]}]);
        let anthropic = json!({"messages": [{"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": img}},
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": doc}},
            {"type": "text", "text": "What is this?"},
        ]}]});
        let gemini = json!({"contents": [{"role": "user", "parts": [
            {"inlineData": {"mimeType": "image/png", "data": img}},
            {"inlineData": {"mimeType": "application/pdf", "data": doc}},
            {"text": "What is this?"},
        ]}]});
        let _ = check_request(&openai, ProviderFormat::OpenAi);
        let _ = check_request(&anthropic, ProviderFormat::Anthropic);
        let _ = check_request(&gemini, ProviderFormat::Gemini);
    }

    /// A media part as an imported event holds it (any size, any page
    /// count, the sizes at the limits of 32 bits): priced for every format
    /// and model without overflow.
    #[test]
    fn media_parts_of_any_size_are_priced(
        width in prop_oneof![any::<u32>(), Just(u32::MAX), Just(0)],
        height in prop_oneof![any::<u32>(), Just(u32::MAX), Just(0)],
        pages in prop_oneof![any::<u32>(), Just(u32::MAX), Just(0)],
        low in any::<bool>(),
        model in prop::sample::select(vec![None, Some("gpt-4.1"), Some("gpt-4o-mini"), Some("gpt-5"),
            Some("o3"), Some("claude-sonnet-4"), Some("gemini-2.0-flash"), Some("gemini-3-flash"), Some("x")]),
    ) {
        use context_compiler::media::cost::media_tokens;
        use context_compiler::working_context::ProviderFormat;
        let id = "a".repeat(64);
        for (kind, mime) in [("image", "image/png"), ("file", PDF)] {
            let part = context_compiler::media::MediaPart::from_json(&json!({
                "type": kind, "mediaType": mime, "artifact": id, "width": width, "height": height,
                "pages": pages, "detail": if low { "low" } else { "high" },
            })).map_err(|e| TestCaseError::fail(e.to_string()))?;
            for format in ProviderFormat::ALL.iter().copied().map(Some).chain([None]) {
                let _ = media_tokens(&part, format, model);
            }
        }
    }

    /// The record wire format: what the encoder writes decodes to the
    /// value; a damaged tape or payload is INVALID_ARGUMENT (or
    /// NOT_SERIALIZABLE past the nesting limit), never a panic.
    #[test]
    fn the_record_tape_decodes_or_is_invalid(
        doc in json_value(),
        edits in tape_edits(),
        cut in any::<Index>(),
        insert in prop::option::of(hostile_text()),
    ) {
        let (mut tape_, mut payload) = (Vec::new(), String::new());
        encode(&doc, &mut tape_, &mut payload);
        let whole = tape::decode(&tape_, &payload).map_err(|e| TestCaseError::fail(e.to_string()))?;
        // Decoded, encoded again: the same tape and payload.
        let (mut again, mut again_payload) = (Vec::new(), String::new());
        encode(&whole, &mut again, &mut again_payload);
        prop_assert_eq!((&again, &again_payload), (&tape_, &payload));
        edit_tape(&mut tape_, &edits);
        if let Some(text) = insert {
            let chars: Vec<usize> = payload.char_indices().map(|(i, _)| i).chain([payload.len()]).collect();
            payload.insert_str(*cut.get(&chars), &text);
        }
        if let Err(e) = tape::decode(&tape_, &payload) {
            prop_assert!(
                matches!(e.code(), ErrorCode::InvalidArgument | ErrorCode::NotSerializable),
                "{:?}: {}", e.code(), e
            );
        }
    }

    /// A mutated session export imports (and then exports and imports back
    /// to the same bytes) or is INVALID_SESSION_IMPORT.
    #[test]
    fn mutated_session_exports_import_or_are_invalid(
        seed in any::<Index>(),
        extra in json_value(),
        edits in edits(6),
    ) {
        let mut built = session("seeded");
        built.record("tool_success", json!({"tool": "t", "result": extra, "call_id": "call_0"}), None)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let sources = [fixture("fuzz/session.json"), built.export_json().into_bytes()];
        let bytes = apply(seed.get::<Vec<u8>>(&sources), &edits, JSON_TOKENS);
        let text = String::from_utf8_lossy(&bytes);
        let counter = Rc::new(Counter);
        match Session::import_json(&text, Rc::new(SystemClock), counter.clone(), 1) {
            Ok(imported) => {
                let exported = imported.export_json();
                let back = Session::import_json(&exported, Rc::new(SystemClock), counter, 1)
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(back.export_json(), exported);
            }
            Err(e) => prop_assert_eq!(e.code(), ErrorCode::InvalidSessionImport, "{}", e),
        }
    }

    /// Whatever rows a SQL connection returns, the store's reads are a
    /// value or STORE_CORRUPT (a saved event that is not one: the import's
    /// INVALID_SESSION_IMPORT), never a panic.
    #[test]
    fn hostile_sql_rows_are_store_corrupt(answers in sql::answers()) {
        for outcome in block_on(sql::read_all(answers)) {
            if let Err(e) = outcome {
                prop_assert!(
                    matches!(e.code(), ErrorCode::StoreCorrupt | ErrorCode::InvalidSessionImport | ErrorCode::ArtifactIntegrity),
                    "{:?}: {}", e.code(), e
                );
            }
        }
    }
}
