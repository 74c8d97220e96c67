//! The seed's `EpisodeSummarizer` (seed 003, phase C): on `session_ended`,
//! asks the injected model for a structured summary of the transcript and
//! emits `episode_summarized` with it.

use std::rc::Rc;

use async_trait::async_trait;
use serde_json::{json, Map, Value};

use super::answer::parse_json_object;
use super::{BusEvent, EventBus, EventHandler};
use crate::error::{Error, ErrorCode, Result};
use crate::llm::{Llm, LlmOptions};

/// The seed's summary prompt; `{transcript}` is replaced.
pub const SUMMARY_PROMPT: &str = r#"Given the following conversation transcript, generate a structured summary.

Transcript:
{transcript}

Return ONLY valid JSON (no markdown, no explanation):
{
  "title": "<5-10 word descriptive title>",
  "summary": "<100-150 word prose summary of what happened>",
  "key_points": ["<point 1>", "<point 2>", "<point 3>"],
  "outcome": "<resolved|partial|unresolved|informational>",
  "topics": ["<topic1>", "<topic2>"]
}"#;

/// The marker put where a long transcript's middle was cut (the seed's).
pub const MIDDLE_TRUNCATED: &str = "\n\n[... middle truncated ...]\n\n";

/// Options of an [`EpisodeSummarizer`]: the seed's limits, configurable.
#[derive(Debug, Clone)]
pub struct SummarizerOptions {
    /// Transcripts shorter than this (in characters) are skipped (50).
    pub min_transcript_chars: usize,
    /// Longer transcripts keep their head and tail (8,000).
    pub max_transcript_chars: usize,
    /// Characters kept at each end of a long transcript (3,800).
    pub head_tail_chars: usize,
    /// The model's token limit for the summary (500).
    pub max_tokens: u64,
    /// The prompt, with `{transcript}` where the transcript goes.
    pub prompt: String,
}

impl Default for SummarizerOptions {
    fn default() -> Self {
        SummarizerOptions {
            min_transcript_chars: 50,
            max_transcript_chars: 8000,
            head_tail_chars: 3800,
            max_tokens: 500,
            prompt: SUMMARY_PROMPT.to_string(),
        }
    }
}

/// The seed's episode summariser, registered on its bus for `session_ended`.
pub struct EpisodeSummarizer {
    bus: EventBus,
    subscription: u64,
}

/// The handler the summariser registers.
struct Summarize {
    bus: EventBus,
    llm: Rc<dyn Llm>,
    options: SummarizerOptions,
}

/// `text` cut to its first and last `keep` characters around
/// [`MIDDLE_TRUNCATED`] when it is longer than `max` characters.
pub fn truncate_middle(text: &str, max: usize, keep: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_string();
    }
    let head: String = text.chars().take(keep).collect();
    let tail: String = text.chars().skip(count.saturating_sub(keep)).collect();
    format!("{head}{MIDDLE_TRUNCATED}{tail}")
}

fn failed(message: String) -> Error {
    Error::new(ErrorCode::HandlerFailed, message)
}

#[async_trait(?Send)]
impl EventHandler for Summarize {
    async fn handle(&self, event: &BusEvent) -> Result<()> {
        let Some(episode_id) = event
            .data
            .get("episode_id")
            .filter(|v| !v.is_null() && *v != "")
        else {
            return Ok(());
        };
        let transcript = event
            .data
            .get("transcript")
            .and_then(Value::as_str)
            .unwrap_or("");
        if transcript.chars().count() < self.options.min_transcript_chars {
            return Ok(());
        }
        let transcript = truncate_middle(
            transcript,
            self.options.max_transcript_chars,
            self.options.head_tail_chars,
        );
        let prompt = self.options.prompt.replace("{transcript}", &transcript);
        let answer = self
            .llm
            .complete(
                &prompt,
                LlmOptions {
                    max_tokens: self.options.max_tokens,
                },
            )
            .await
            .map_err(|e| {
                failed(format!(
                    "episode summarizer: the model failed: {}",
                    e.message()
                ))
            })?;
        let summary = parse_json_object(&answer).ok_or_else(|| {
            let head: String = answer.chars().take(80).collect();
            failed(format!(
                "episode summarizer: the model's answer is not a JSON object: {head:?}"
            ))
        })?;
        let mut data = Map::new();
        data.insert("episode_id".into(), episode_id.clone());
        data.insert("summary".into(), Value::Object(summary));
        for key in ["user_id", "user_display_name"] {
            if let Some(v) = event.data.get(key) {
                data.insert(key.into(), v.clone());
            }
        }
        let now = self.bus.clock().now_ms();
        let downstream = BusEvent::new(
            "episode_summarized",
            event.agent_id.clone(),
            event.session_id.clone(),
            data,
            now,
        );
        if !self.bus.emit(downstream) {
            return Err(failed(format!(
                "episode summarizer: the bus queue is full; the summary of {} was dropped",
                json!(episode_id)
            )));
        }
        Ok(())
    }
}

impl EpisodeSummarizer {
    /// A summariser on `bus`, registered for `session_ended` until dropped.
    pub fn new(bus: &EventBus, llm: Rc<dyn Llm>, options: SummarizerOptions) -> EpisodeSummarizer {
        EpisodeSummarizer {
            bus: bus.clone(),
            subscription: EpisodeSummarizer::register(bus, llm, options),
        }
    }

    /// Registers a summariser for as long as `bus` lives (the seed's
    /// construction); returns the id `bus.off` takes to remove it.
    pub fn register(bus: &EventBus, llm: Rc<dyn Llm>, options: SummarizerOptions) -> u64 {
        let handler = Rc::new(Summarize {
            bus: bus.clone(),
            llm,
            options,
        });
        bus.on("session_ended", "episode-summarizer", handler)
    }
}

impl Drop for EpisodeSummarizer {
    fn drop(&mut self) {
        self.bus.off(self.subscription);
    }
}
