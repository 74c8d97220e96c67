//! `SleepHandler` for JS: the core sleep handler with an injected model
//! and memory.

use context_compiler_js::error::JsResult;
use wasm_bindgen::prelude::*;

use crate::event_bus::bus_option;
use context_compiler::bus::{SleepHandler, SleepOptions, Subscription};
use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler_js::convert::{from_js, option};
use context_compiler_js::llm::llm_option;
use context_compiler_js::memory_arg::memory_arg;
use context_compiler_js::options::{number_option, string_option, usize_option, FRACTION, MILLIS};

#[wasm_bindgen(typescript_custom_section)]
const TS_SLEEP: &'static str = r#"
export interface SleepHandlerOptions {
  bus: EventBus;
  /** The injected model: `(prompt, { maxTokens, signal }) => string`, or an object with `complete`. */
  llm: Summarizer | { complete: Summarizer };
  /** The memory the phases work on. */
  memory: InMemoryBackend | PersistentMemory | WritableMemoryStore;
  /** Entries neither recalled nor created within this are pruned (30 days, in ms). */
  pruneAfterMs?: number;
  /** Categories no phase removes or rewrites (`["core"]`). */
  keepCategories?: string[];
  /** Review removes facts less confident than this (0.6). */
  minConfidence?: number;
  /** Review merges facts about one subject more similar than this (0.85). */
  duplicateSimilarity?: number;
  /** Episodes older than this are compressed (7 days, in ms). */
  compressAfterMs?: number;
  /** Episodes compressed per sleep (5). */
  compressBatch?: number;
  /** Reflection reads the episodes of this window (24 hours, in ms). */
  reflectWindowMs?: number;
  /** Reflection needs at least this many episodes (2). */
  reflectMinEpisodes?: number;
  /** Reflection reads at most this many episodes (10). */
  reflectMaxEpisodes?: number;
  /** Characters of each episode reflection reads (200). */
  reflectEpisodeChars?: number;
  /** Lessons stored per reflection (3). */
  maxLessons?: number;
  /** A subject with at least this many facts is generalized (6). */
  generalizeMinFacts?: number;
  /** Clusters generalized per sleep (3). */
  generalizeMaxClusters?: number;
  /** The model's token limit per call (500). */
  maxTokens?: number;
  /** The reflection prompt, with `{episodes}`. */
  reflectionPrompt?: string;
  /** The generalisation prompt, with `{facts}`. */
  generalizePrompt?: string;
  /** The compression prompt, with `{episodes}`. */
  compressPrompt?: string;
}
"#;

#[wasm_bindgen]
extern "C" {
    /// The `SleepHandlerOptions` object.
    #[wasm_bindgen(typescript_type = "SleepHandlerOptions")]
    pub type SleepHandlerOptionsArg;
}

fn read_options(options: &Option<SleepHandlerOptionsArg>) -> Result<SleepOptions> {
    let d = SleepOptions::default();
    let keep = option(options, "keepCategories", "options")?;
    let keep_categories = if keep.is_undefined() || keep.is_null() {
        d.keep_categories.clone()
    } else {
        from_js::<Vec<String>>(&keep, "options.keepCategories").map_err(|_| {
            Error::new(
                ErrorCode::InvalidArgument,
                "options.keepCategories must be an array of strings",
            )
        })?
    };
    Ok(SleepOptions {
        prune_after_ms: number_option(options, "pruneAfterMs", d.prune_after_ms, MILLIS)?,
        keep_categories,
        min_confidence: number_option(options, "minConfidence", d.min_confidence, FRACTION)?,
        duplicate_similarity: number_option(
            options,
            "duplicateSimilarity",
            d.duplicate_similarity,
            FRACTION,
        )?,
        compress_after_ms: number_option(options, "compressAfterMs", d.compress_after_ms, MILLIS)?,
        compress_batch: usize_option(options, "compressBatch", d.compress_batch)?,
        reflect_window_ms: number_option(options, "reflectWindowMs", d.reflect_window_ms, MILLIS)?,
        reflect_min_episodes: usize_option(options, "reflectMinEpisodes", d.reflect_min_episodes)?,
        reflect_max_episodes: usize_option(options, "reflectMaxEpisodes", d.reflect_max_episodes)?,
        reflect_episode_chars: usize_option(
            options,
            "reflectEpisodeChars",
            d.reflect_episode_chars,
        )?,
        max_lessons: usize_option(options, "maxLessons", d.max_lessons)?,
        generalize_min_facts: usize_option(options, "generalizeMinFacts", d.generalize_min_facts)?,
        generalize_max_clusters: usize_option(
            options,
            "generalizeMaxClusters",
            d.generalize_max_clusters,
        )?,
        max_tokens: usize_option(options, "maxTokens", d.max_tokens as usize)? as u64,
        reflection_prompt: string_option(options, "reflectionPrompt", &d.reflection_prompt)?,
        generalize_prompt: string_option(options, "generalizePrompt", &d.generalize_prompt)?,
        compress_prompt: string_option(options, "compressPrompt", &d.compress_prompt)?,
    })
}

/// The sleep handler: on `sleep_started`, runs review, prune,
/// compress, reflect and generalize over `memory` (stopping after the
/// running phase when `message_received` is emitted) and emits
/// `sleep_completed { phases_completed, interrupted, phases_failed, changes }`.
/// It keeps `episode_summarized` summaries in memory as episodes. It stays
/// registered as long as the bus lives; `detach()` removes it.
#[wasm_bindgen(js_name = SleepHandler)]
pub struct JsSleepHandler {
    subscription: Subscription,
}

#[wasm_bindgen(js_class = SleepHandler)]
impl JsSleepHandler {
    /// Registers the handler on `options.bus`.
    #[wasm_bindgen(constructor)]
    pub fn new(options: SleepHandlerOptionsArg) -> JsResult<JsSleepHandler> {
        let options = Some(options);
        let bus = bus_option(&options)?;
        let llm = llm_option(&options)?;
        let memory = memory_arg(&option(&options, "memory", "options")?, true)?;
        let core = read_options(&options)?;
        let subscription = SleepHandler::register(&bus, llm, memory, core);
        Ok(JsSleepHandler { subscription })
    }

    /// Unregisters the handler; `false` if it already was.
    pub fn detach(&self) -> bool {
        self.subscription.detach()
    }
}
