//! `FactExtractor` for JS: the core extractor with an injected model,
//! memory and, optionally, embedder.

use std::rc::Rc;

use async_trait::async_trait;
use context_compiler_js::error::JsResult;
use js_sys::Function;
use wasm_bindgen::prelude::*;

use crate::event_bus::bus_option;
use context_compiler::bus::{FactExtractor, FactExtractorOptions, Similarity, Subscription};
use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler::memory::Embedder;
use context_compiler_js::convert::{describe, option};
use context_compiler_js::llm::llm_option;
use context_compiler_js::memory_arg::memory_arg;
use context_compiler_js::options::{number_option, string_option, usize_option, FRACTION};
use context_compiler_js::promise::{call_and_await, require_callable};

#[wasm_bindgen(typescript_custom_section)]
const TS_FACTS: &'static str = r#"
/** Turns text into a vector: a host's embedding model. */
export type EmbedFunction = (text: string) => number[] | Float32Array | Promise<number[] | Float32Array>;

export interface FactExtractorOptions {
  bus: EventBus;
  /** The injected model: `(prompt, { maxTokens, signal }) => string`, or an object with `complete`. */
  llm: Summarizer | { complete: Summarizer };
  /** Where facts are written: an `InMemoryBackend`, a `PersistentMemory`, or an object with recall, put, delete and list. */
  memory: InMemoryBackend | PersistentMemory | WritableMemoryStore;
  /** Compares facts by the cosine of these vectors instead of the built-in lexical similarity. */
  embed?: EmbedFunction | { embed: EmbedFunction };
  /** Candidates considered per episode (5). */
  maxFacts?: number;
  /** Candidates less confident than this are skipped (0.6). */
  minConfidence?: number;
  /** The confidence of a candidate that states none (0.7). */
  defaultConfidence?: number;
  /** More similar than this to a remembered entry is a duplicate (0.85). */
  duplicateSimilarity?: number;
  /** Remembered entries each candidate is compared with (5). */
  duplicateCandidates?: number;
  /** The model's token limit (500). */
  maxTokens?: number;
  /** The prompt, with `{summary}` and `{key_points}` (a default one when absent). */
  prompt?: string;
}

/** A memory store written in JS that the background handlers can write to. */
export interface WritableMemoryStore extends MemoryStoreLike {
  put(entry: MemoryEntry): void | Promise<void>;
  delete(key: string): boolean | Promise<boolean>;
  list(filter: MemoryFilter): MemoryEntry[] | Promise<MemoryEntry[]>;
}
"#;

#[wasm_bindgen]
extern "C" {
    /// The `FactExtractorOptions` object.
    #[wasm_bindgen(typescript_type = "FactExtractorOptions")]
    pub type FactExtractorOptionsArg;
}

/// A JS embedding function as the core's [`Embedder`].
struct JsEmbedder {
    this: JsValue,
    embed: Function,
}

#[async_trait(?Send)]
impl Embedder for JsEmbedder {
    async fn embed(&self, text: &str) -> Result<Vec<f32>> {
        let out = call_and_await(
            &self.embed,
            &self.this,
            &[text.into()],
            ErrorCode::HandlerFailed,
            "embed",
        )
        .await?;
        let bad = || {
            Error::new(
                ErrorCode::HandlerFailed,
                format!(
                    "embed must return an array of numbers (got {})",
                    describe(&out)
                ),
            )
        };
        if let Some(f32s) = out.dyn_ref::<js_sys::Float32Array>() {
            return Ok(f32s.to_vec());
        }
        let array = out.dyn_ref::<js_sys::Array>().ok_or_else(bad)?;
        array
            .iter()
            .map(|v| v.as_f64().map(|x| x as f32).ok_or_else(bad))
            .collect()
    }
}

/// The fact extractor: on `episode_summarized`, asks `llm` for facts,
/// keeps at most five confident ones not already remembered, writes them to
/// `memory` and emits `facts_extracted`. It stays registered as long as the
/// bus lives; `detach()` removes it.
#[wasm_bindgen(js_name = FactExtractor)]
pub struct JsFactExtractor {
    subscription: Subscription,
}

#[wasm_bindgen(js_class = FactExtractor)]
impl JsFactExtractor {
    /// Registers the extractor on `options.bus`.
    #[wasm_bindgen(constructor)]
    pub fn new(options: FactExtractorOptionsArg) -> JsResult<JsFactExtractor> {
        let options = Some(options);
        let bus = bus_option(&options)?;
        let llm = llm_option(&options)?;
        let memory = memory_arg(&option(&options, "memory", "options")?, true)?;
        let embed = option(&options, "embed", "options")?;
        let similarity = if embed.is_undefined() || embed.is_null() {
            Similarity::Lexical
        } else {
            let (this, embed) = require_callable(
                &embed,
                "embed",
                "options.embed must be a function (text) => number[] or an object with embed()",
            )?;
            Similarity::Embedder(Rc::new(JsEmbedder { this, embed }))
        };
        let d = FactExtractorOptions::default();
        let core = FactExtractorOptions {
            max_facts: usize_option(&options, "maxFacts", d.max_facts)?,
            min_confidence: number_option(&options, "minConfidence", d.min_confidence, FRACTION)?,
            default_confidence: number_option(
                &options,
                "defaultConfidence",
                d.default_confidence,
                FRACTION,
            )?,
            duplicate_similarity: number_option(
                &options,
                "duplicateSimilarity",
                d.duplicate_similarity,
                FRACTION,
            )?,
            duplicate_candidates: usize_option(
                &options,
                "duplicateCandidates",
                d.duplicate_candidates,
            )?,
            max_tokens: usize_option(&options, "maxTokens", d.max_tokens as usize)? as u64,
            prompt: string_option(&options, "prompt", &d.prompt)?,
        };
        let subscription = FactExtractor::register(&bus, llm, memory, similarity, core);
        Ok(JsFactExtractor { subscription })
    }

    /// Unregisters the extractor; `false` if it already was.
    pub fn detach(&self) -> bool {
        self.subscription.detach()
    }
}
