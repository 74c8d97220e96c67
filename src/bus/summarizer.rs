//! The `EpisodeSummarizer`: on `session_ended`,
//! asks the injected model for a structured summary of the transcript and
//! emits `episode_summarized` with it.

use std::rc::Rc;

use async_trait::async_trait;
use serde_json::{json, Map, Value};

use super::answer::{ask_object, failed};
use super::subscription::{registered_until_dropped, DetachOnDrop, Subscription};
use super::{BusEvent, EventBus, EventHandler};
use crate::error::Result;
use crate::llm::Llm;

/// The default summary prompt; `{transcript}` is replaced.
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

/// The marker put where a long transcript's middle was cut.
pub const MIDDLE_TRUNCATED: &str = "\n\n[... middle truncated ...]\n\n";

/// Options of an [`EpisodeSummarizer`]: its limits.
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

/// The episode summariser, registered on its bus for `session_ended`
/// until dropped.
pub struct EpisodeSummarizer(DetachOnDrop);

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
        let summary = ask_object(
            self.llm.as_ref(),
            &prompt,
            self.options.max_tokens,
            "episode summarizer",
        )
        .await?;
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

registered_until_dropped!(
    EpisodeSummarizer,
    "A summariser on `bus`, registered for `session_ended` until dropped.",
    (llm: Rc<dyn Llm>, options: SummarizerOptions)
);

impl EpisodeSummarizer {
    /// Registers a summariser for as long as `bus` lives, until the returned
    /// subscription is detached.
    pub fn register(bus: &EventBus, llm: Rc<dyn Llm>, options: SummarizerOptions) -> Subscription {
        let handler = Rc::new(Summarize {
            bus: bus.clone(),
            llm,
            options,
        });
        Subscription::new(
            bus,
            vec![bus.on("session_ended", "episode-summarizer", handler)],
        )
    }
}
