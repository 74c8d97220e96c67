//! `EpisodeSummarizer` for JS: the core summariser with an injected model.

use context_compiler_js::error::JsResult;
use wasm_bindgen::prelude::*;

use crate::event_bus::bus_option;
use context_compiler::bus::{EpisodeSummarizer, Subscription, SummarizerOptions};
use context_compiler_js::llm::llm_option;
use context_compiler_js::options::{string_option, usize_option};

#[wasm_bindgen(typescript_custom_section)]
const TS_SUMMARIZER: &'static str = r#"
export interface EpisodeSummarizerOptions {
  bus: EventBus;
  /** The injected model, as the compactor's summarizer: a function or an object with `complete`. */
  llm: Summarizer | { complete: Summarizer };
  /** Transcripts shorter than this are skipped (50 characters). */
  minTranscriptChars?: number;
  /** Longer transcripts keep their head and tail (8,000 characters). */
  maxTranscriptChars?: number;
  /** Characters kept at each end of a long transcript (3,800). */
  headTailChars?: number;
  /** The model's token limit (500). */
  maxTokens?: number;
  /** The prompt, with `{transcript}` where the transcript goes (a default one when absent). */
  prompt?: string;
}
"#;

#[wasm_bindgen]
extern "C" {
    /// The `EpisodeSummarizerOptions` object.
    #[wasm_bindgen(typescript_type = "EpisodeSummarizerOptions")]
    pub type EpisodeSummarizerOptionsArg;
}

/// The episode summariser: on `session_ended` with an `episode_id`
/// and a transcript, asks `llm` for a JSON summary and emits
/// `episode_summarized`. It stays registered as long as the bus lives, even
/// when this object is freed; `detach()` removes it.
#[wasm_bindgen(js_name = EpisodeSummarizer)]
pub struct JsEpisodeSummarizer {
    subscription: Subscription,
}

#[wasm_bindgen(js_class = EpisodeSummarizer)]
impl JsEpisodeSummarizer {
    /// Registers the summariser on `options.bus`.
    #[wasm_bindgen(constructor)]
    pub fn new(options: EpisodeSummarizerOptionsArg) -> JsResult<JsEpisodeSummarizer> {
        let options = Some(options);
        let bus = bus_option(&options)?;
        let llm = llm_option(&options)?;
        let d = SummarizerOptions::default();
        let core = SummarizerOptions {
            min_transcript_chars: usize_option(
                &options,
                "minTranscriptChars",
                d.min_transcript_chars,
            )?,
            max_transcript_chars: usize_option(
                &options,
                "maxTranscriptChars",
                d.max_transcript_chars,
            )?,
            head_tail_chars: usize_option(&options, "headTailChars", d.head_tail_chars)?,
            max_tokens: usize_option(&options, "maxTokens", d.max_tokens as usize)? as u64,
            prompt: string_option(&options, "prompt", &d.prompt)?,
        };
        let subscription = EpisodeSummarizer::register(&bus, llm, core);
        Ok(JsEpisodeSummarizer { subscription })
    }

    /// Unregisters the summariser; `false` if it already was.
    pub fn detach(&self) -> bool {
        self.subscription.detach()
    }
}
