//! The `FactExtractor`: on `episode_summarized`, asks the injected model for
//! facts worth remembering, keeps at most five confident, new ones, and writes
//! them to a [`MemoryStore`].
//!
//! A candidate is compared with the entries memory recalls for it: by
//! [`lexical_similarity`] by default, or by the cosine of an injected
//! [`Embedder`]'s vectors.

use std::rc::Rc;

use async_trait::async_trait;
use serde_json::{json, Map, Value};

use super::answer::{ask_array, failed, text_field};
use super::subscription::{registered_until_dropped, DetachOnDrop, Subscription};
use super::{BusEvent, EventBus, EventHandler};
use crate::artifacts::content_id;
use crate::error::Result;
use crate::llm::Llm;
use crate::memory::{cosine_similarity, lexical_similarity, Embedder, MemoryEntry, MemoryStore};

/// The default extraction prompt; `{summary}` and `{key_points}` are replaced.
pub const EXTRACT_PROMPT: &str = r#"Review the following conversation summary and extract facts worth remembering long-term.

Focus on:
- User preferences (tools, formats, units, communication style)
- Project/system facts (architecture, constraints, conventions)
- People facts (roles, names, relationships)
- Rules or recurring patterns observed

Summary: {summary}
Key Points: {key_points}

Return ONLY a valid JSON array (empty array if nothing worth storing):
[
  {
    "subject": "<who/what the fact is about>",
    "content": "<the fact, stated clearly>",
    "category": "<preference|technical|person|tool|concept|rule>",
    "confidence": <0.0-1.0>
  }
]

Only include facts genuinely useful across future conversations.
Skip transient, trivial, or already-known information.
Max 5 facts."#;

/// The `source` of the facts the extractor writes.
pub const FACT_SOURCE: &str = "fact_extractor";

/// Options of a [`FactExtractor`]: its limits.
#[derive(Debug, Clone)]
pub struct FactExtractorOptions {
    /// Candidates considered per episode (default 5).
    pub max_facts: usize,
    /// Candidates less confident than this are skipped (0.6).
    pub min_confidence: f64,
    /// The confidence of a candidate that states none (0.7).
    pub default_confidence: f64,
    /// A candidate more similar than this to a remembered entry is a duplicate (0.85).
    pub duplicate_similarity: f64,
    /// Remembered entries a candidate is compared with (5).
    pub duplicate_candidates: usize,
    /// The model's token limit (500).
    pub max_tokens: u64,
    /// The prompt, with `{summary}` and `{key_points}` where they go.
    pub prompt: String,
}

impl Default for FactExtractorOptions {
    fn default() -> Self {
        FactExtractorOptions {
            max_facts: 5,
            min_confidence: 0.6,
            default_confidence: 0.7,
            duplicate_similarity: 0.85,
            duplicate_candidates: 5,
            max_tokens: 500,
            prompt: EXTRACT_PROMPT.to_string(),
        }
    }
}

/// How alike a candidate fact and a remembered entry are.
#[derive(Clone)]
pub enum Similarity {
    /// [`lexical_similarity`] (the default).
    Lexical,
    /// The cosine of the embedder's vectors.
    Embedder(Rc<dyn Embedder>),
}

impl Similarity {
    async fn between(&self, a: &str, b: &str) -> Result<f64> {
        match self {
            Similarity::Lexical => Ok(lexical_similarity(a, b)),
            Similarity::Embedder(e) => {
                Ok(cosine_similarity(&e.embed(a).await?, &e.embed(b).await?))
            }
        }
    }
}

/// The memory key of a fact: `fact:` and 16 hex digits of the hash of its
/// subject and content, so the same fact is one entry.
pub fn fact_key(prefix: &str, subject: &str, content: &str) -> String {
    let id = content_id(format!("{subject}\u{0}{content}").as_bytes());
    format!("{prefix}:{}", &id[..16])
}

/// The fact extractor, registered on its bus for `episode_summarized`
/// until dropped.
pub struct FactExtractor(DetachOnDrop);

/// The handler the extractor registers.
struct Extract {
    bus: EventBus,
    llm: Rc<dyn Llm>,
    memory: Rc<dyn MemoryStore>,
    similarity: Similarity,
    options: FactExtractorOptions,
}

/// What happened to one episode's candidates.
#[derive(Default)]
struct Tally {
    stored: Vec<String>,
    duplicates: u64,
    low_confidence: u64,
    invalid: u64,
}

impl Extract {
    /// Whether memory holds an entry more similar than the threshold.
    async fn is_duplicate(&self, content: &str) -> Result<bool> {
        let near = self
            .memory
            .recall(content, self.options.duplicate_candidates)
            .await?;
        for entry in near {
            if self.similarity.between(content, &entry.content).await?
                > self.options.duplicate_similarity
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Stores one candidate, or counts why not.
    async fn consider(&self, candidate: &Value, tally: &mut Tally) -> Result<()> {
        let Some(fact) = candidate.as_object() else {
            tally.invalid += 1;
            return Ok(());
        };
        let content = text_field(fact, "content").unwrap_or("");
        let confidence = match fact.get("confidence") {
            None | Some(Value::Null) => Some(self.options.default_confidence),
            Some(v) => v.as_f64().filter(|c| c.is_finite()),
        };
        let Some(confidence) = confidence.filter(|_| !content.is_empty()) else {
            tally.invalid += 1;
            return Ok(());
        };
        if confidence < self.options.min_confidence {
            tally.low_confidence += 1;
            return Ok(());
        }
        if self.is_duplicate(content).await? {
            tally.duplicates += 1;
            return Ok(());
        }
        let text = |key: &str, default: &str| text_field(fact, key).unwrap_or(default).to_string();
        let subject = text("subject", "unknown");
        let key = fact_key("fact", &subject, content);
        self.memory
            .put(MemoryEntry {
                key: key.clone(),
                content: content.to_string(),
                category: text("category", "fact"),
                subject: Some(subject),
                confidence: Some(confidence.min(1.0)),
                source: Some(FACT_SOURCE.to_string()),
                ..MemoryEntry::default()
            })
            .await?;
        tally.stored.push(key);
        Ok(())
    }
}

#[async_trait(?Send)]
impl EventHandler for Extract {
    async fn handle(&self, event: &BusEvent) -> Result<()> {
        let summary = event.data.get("summary").and_then(Value::as_object);
        let summary_text = summary
            .and_then(|s| s.get("summary"))
            .and_then(Value::as_str)
            .unwrap_or("");
        if summary_text.trim().is_empty() {
            return Ok(());
        }
        let key_points: Vec<&str> = summary
            .and_then(|s| s.get("key_points"))
            .and_then(Value::as_array)
            .map(|points| points.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let prompt = self
            .options
            .prompt
            .replace("{summary}", summary_text)
            .replace("{key_points}", &key_points.join(", "));
        let candidates = ask_array(
            self.llm.as_ref(),
            &prompt,
            self.options.max_tokens,
            "fact extractor",
        )
        .await?;
        let mut tally = Tally::default();
        let mut first_error = None;
        for candidate in candidates.iter().take(self.options.max_facts) {
            if let Err(e) = self.consider(candidate, &mut tally).await {
                first_error.get_or_insert(e);
            }
        }
        let mut data = Map::new();
        data.insert(
            "episode_id".into(),
            event.data.get("episode_id").cloned().unwrap_or(Value::Null),
        );
        data.insert("facts".into(), json!(tally.stored));
        data.insert("skipped_duplicates".into(), json!(tally.duplicates));
        data.insert("skipped_low_confidence".into(), json!(tally.low_confidence));
        data.insert("skipped_invalid".into(), json!(tally.invalid));
        let now = self.bus.clock().now_ms();
        self.bus.emit(BusEvent::new(
            "facts_extracted",
            event.agent_id.clone(),
            event.session_id.clone(),
            data,
            now,
        ));
        match first_error {
            Some(e) => Err(failed(format!(
                "fact extractor: memory failed ({} stored before): {}",
                tally.stored.len(),
                e.message()
            ))),
            None => Ok(()),
        }
    }
}

registered_until_dropped!(
    FactExtractor,
    "An extractor on `bus`, writing to `memory`, registered for `episode_summarized` until dropped.",
    (
        llm: Rc<dyn Llm>,
        memory: Rc<dyn MemoryStore>,
        similarity: Similarity,
        options: FactExtractorOptions,
    )
);

impl FactExtractor {
    /// Registers an extractor for as long as `bus` lives, until the returned
    /// subscription is detached.
    pub fn register(
        bus: &EventBus,
        llm: Rc<dyn Llm>,
        memory: Rc<dyn MemoryStore>,
        similarity: Similarity,
        options: FactExtractorOptions,
    ) -> Subscription {
        let handler = Rc::new(Extract {
            bus: bus.clone(),
            llm,
            memory,
            similarity,
            options,
        });
        Subscription::new(
            bus,
            vec![bus.on("episode_summarized", "fact-extractor", handler)],
        )
    }
}
