//! The `SleepHandler`: on `sleep_started`, runs
//! five consolidation phases over the memory store, the free ones first,
//! and emits `sleep_completed { phases_completed, interrupted }`.
//!
//! Every phase does real work, and the wake-up is a bus watcher, told at
//! emit time (a bus that awaited each event's handlers before taking the
//! next could never deliver the waking `message_received` while a sleep
//! ran):
//!
//! 1. `review`: removes facts below the confidence floor, and near-duplicate
//!    facts about one subject (keeping the most confident, then newest).
//! 2. `prune`: removes entries neither recalled nor created within
//!    `prune_after_ms`.
//! 3. `compress` (model): folds the oldest episodes past `compress_after_ms`
//!    into one digest entry.
//! 4. `reflect` (model): over the episodes of the last `reflect_window_ms`
//!    (at least two), stores the reflection and up to three lessons as facts.
//! 5. `generalize` (model): merges each large cluster of facts about one
//!    subject into one generalized fact.
//!
//! The handler also keeps every `episode_summarized` summary it sees in
//! memory (category `episode`), which is what compress and reflect read and
//! what later compiles can recall.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use async_trait::async_trait;
use serde_json::{json, Map, Value};

use super::answer::{ask_object, failed, text_field};
use super::facts::fact_key;
use super::interrupt::Interrupt;
use super::subscription::{registered_until_dropped, DetachOnDrop, Subscription};
use super::{BusEvent, EventBus, EventHandler};
use crate::error::Result;
use crate::llm::Llm;
use crate::memory::{lexical_similarity, MemoryEntry, MemoryFilter, MemoryStore};
use context_compiler_text::order::{descending, float_descending, sort_stable_by_key};

/// The default reflection prompt; `{episodes}` is replaced.
pub const REFLECTION_PROMPT: &str = r#"You are an AI agent reviewing your recent activity. Analyze the following
episode summaries from the past 24 hours and identify:

1. Patterns — recurring topics, user needs, or behaviors
2. Lessons — what worked well, what didn't
3. Connections — links between seemingly unrelated conversations
4. Gaps — knowledge you needed but didn't have

Episodes:
{episodes}

Return ONLY valid JSON:
{
  "patterns": ["<pattern 1>", "<pattern 2>"],
  "lessons": ["<lesson 1>", "<lesson 2>"],
  "connections": ["<connection 1>"],
  "gaps": ["<gap 1>"],
  "summary": "<2-3 sentence reflection on the day>"
}"#;

/// The default generalisation prompt; `{facts}` is replaced.
pub const GENERALIZE_PROMPT: &str = r#"These facts are about the same topic. Create one generalized fact
that captures the essential knowledge from all of them.

Facts:
{facts}

Return ONLY valid JSON:
{
  "subject": "<who/what>",
  "content": "<generalized fact>",
  "confidence": <0.0-1.0>
}"#;

/// The compression prompt for old episodes; `{episodes}` is replaced.
pub const COMPRESS_PROMPT: &str = r#"These are summaries of older conversations. Compress them into one digest
that keeps what is worth remembering: decisions, outcomes, preferences and facts.

Episodes:
{episodes}

Return ONLY valid JSON:
{
  "summary": "<one paragraph digest>",
  "key_points": ["<point 1>", "<point 2>"]
}"#;

/// The phases in the order they run (free ones first).
pub const SLEEP_PHASES: [&str; 5] = ["review", "prune", "compress", "reflect", "generalize"];

/// The memory category of the episode summaries the handler keeps.
pub const EPISODE_CATEGORY: &str = "episode";
/// The memory category of compressed episodes.
pub const DIGEST_CATEGORY: &str = "episode_digest";

const DAY_MS: f64 = 24.0 * 3_600_000.0;

/// Options of a [`SleepHandler`]: its limits.
#[derive(Debug, Clone)]
pub struct SleepOptions {
    /// Entries neither recalled nor created within this are pruned (30 days).
    pub prune_after_ms: f64,
    /// Categories no phase removes or rewrites (`core`).
    pub keep_categories: Vec<String>,
    /// Review removes facts less confident than this (0.6).
    pub min_confidence: f64,
    /// Review merges facts about one subject more similar than this (0.85).
    pub duplicate_similarity: f64,
    /// Episodes older than this are compressed (7 days).
    pub compress_after_ms: f64,
    /// Episodes compressed per sleep (default 5).
    pub compress_batch: usize,
    /// Reflection reads the episodes of this window (24 hours).
    pub reflect_window_ms: f64,
    /// Reflection needs at least this many episodes (2).
    pub reflect_min_episodes: usize,
    /// Reflection reads at most this many episodes (10).
    pub reflect_max_episodes: usize,
    /// Characters of each episode reflection reads (200).
    pub reflect_episode_chars: usize,
    /// Lessons stored per reflection (3).
    pub max_lessons: usize,
    /// A subject with at least this many facts is generalized (default 6).
    pub generalize_min_facts: usize,
    /// Clusters generalized per sleep (3).
    pub generalize_max_clusters: usize,
    /// The model's token limit per call (500).
    pub max_tokens: u64,
    /// The reflection prompt, with `{episodes}`.
    pub reflection_prompt: String,
    /// The generalisation prompt, with `{facts}`.
    pub generalize_prompt: String,
    /// The compression prompt, with `{episodes}`.
    pub compress_prompt: String,
}

impl Default for SleepOptions {
    fn default() -> Self {
        SleepOptions {
            prune_after_ms: 30.0 * DAY_MS,
            keep_categories: vec!["core".to_string()],
            min_confidence: 0.6,
            duplicate_similarity: 0.85,
            compress_after_ms: 7.0 * DAY_MS,
            compress_batch: 5,
            reflect_window_ms: DAY_MS,
            reflect_min_episodes: 2,
            reflect_max_episodes: 10,
            reflect_episode_chars: 200,
            max_lessons: 3,
            generalize_min_facts: 6,
            generalize_max_clusters: 3,
            max_tokens: 500,
            reflection_prompt: REFLECTION_PROMPT.to_string(),
            generalize_prompt: GENERALIZE_PROMPT.to_string(),
            compress_prompt: COMPRESS_PROMPT.to_string(),
        }
    }
}

/// The sleep handler, registered on its bus until dropped.
pub struct SleepHandler(DetachOnDrop);

/// Whether a sleep runs, and the interrupt that wakes it.
#[derive(Default)]
struct SleepState {
    wake: Option<Interrupt>,
}

/// The shared work of the handler's three registrations.
struct Sleeper {
    bus: EventBus,
    llm: Rc<dyn Llm>,
    memory: Rc<dyn MemoryStore>,
    options: SleepOptions,
    state: RefCell<SleepState>,
}

/// Ends the sleep when the run ends or is dropped (a handler timeout).
struct Awake<'a>(&'a RefCell<SleepState>);

impl Drop for Awake<'_> {
    fn drop(&mut self) {
        if let Ok(mut s) = self.0.try_borrow_mut() {
            s.wake = None;
        }
    }
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

impl Sleeper {
    fn kept(&self, entry: &MemoryEntry) -> bool {
        self.options.keep_categories.contains(&entry.category)
    }

    /// Whether `entry` is a fact (not an episode, digest or kept entry).
    fn is_fact(&self, entry: &MemoryEntry) -> bool {
        !self.kept(entry) && entry.category != EPISODE_CATEGORY && entry.category != DIGEST_CATEGORY
    }

    async fn ask(&self, prompt: &str, phase: &str) -> Result<Map<String, Value>> {
        let who = format!("sleep {phase}");
        ask_object(self.llm.as_ref(), prompt, self.options.max_tokens, &who).await
    }

    async fn all(&self) -> Result<Vec<MemoryEntry>> {
        self.memory.list(&MemoryFilter::default()).await
    }

    /// The episodes whose age (ms since created) `keep` accepts, newest first.
    async fn episodes(&self, keep: impl Fn(f64) -> bool) -> Result<Vec<MemoryEntry>> {
        let now = self.bus.clock().now_ms();
        let mut episodes: Vec<MemoryEntry> = self
            .memory
            .list(&MemoryFilter {
                category: Some(EPISODE_CATEGORY.to_string()),
                ..MemoryFilter::default()
            })
            .await?
            .into_iter()
            .filter(|e| e.created_at.is_some_and(|t| keep(now - t)))
            .collect();
        sort_stable_by_key(&mut episodes, |e| {
            (float_descending(e.created_at.unwrap_or(0.0)), 0)
        });
        Ok(episodes)
    }

    /// Removes `keys`; how many were there.
    async fn remove(&self, keys: &[String]) -> Result<u64> {
        let mut removed = 0;
        for key in keys {
            removed += u64::from(self.memory.delete(key).await?);
        }
        Ok(removed)
    }

    /// Phase `review`: low-confidence and near-duplicate facts.
    async fn review(&self) -> Result<u64> {
        let facts: Vec<MemoryEntry> = self
            .all()
            .await?
            .into_iter()
            .filter(|e| self.is_fact(e))
            .collect();
        let mut doomed: Vec<String> = facts
            .iter()
            .filter(|e| {
                e.confidence
                    .is_some_and(|c| c < self.options.min_confidence)
            })
            .map(|e| e.key.clone())
            .collect();
        let mut by_subject: BTreeMap<&str, Vec<&MemoryEntry>> = BTreeMap::new();
        for fact in facts.iter().filter(|e| !doomed.contains(&e.key)) {
            by_subject
                .entry(fact.subject.as_deref().unwrap_or(""))
                .or_default()
                .push(fact);
        }
        for group in by_subject.values_mut() {
            // Best first: most confident, then newest.
            sort_stable_by_key(group, |e| {
                (
                    float_descending(e.confidence.unwrap_or(0.0)),
                    float_descending(e.created_at.unwrap_or(0.0)),
                )
            });
            let mut kept: Vec<&MemoryEntry> = Vec::new();
            for fact in group.iter() {
                let duplicate = kept.iter().any(|k| {
                    lexical_similarity(&k.content, &fact.content)
                        > self.options.duplicate_similarity
                });
                if duplicate {
                    doomed.push(fact.key.clone());
                } else {
                    kept.push(fact);
                }
            }
        }
        self.remove(&doomed).await
    }

    /// Phase `prune`: entries unused for `prune_after_ms`.
    async fn prune(&self, now: f64) -> Result<u64> {
        let stale: Vec<String> = self
            .all()
            .await?
            .into_iter()
            .filter(|e| !self.kept(e))
            .filter(|e| {
                e.last_used_at()
                    .is_some_and(|t| now - t > self.options.prune_after_ms)
            })
            .map(|e| e.key)
            .collect();
        self.remove(&stale).await
    }

    /// Phase `compress`: the oldest old episodes into one digest.
    async fn compress(&self) -> Result<u64> {
        let mut old = self
            .episodes(|age| age > self.options.compress_after_ms)
            .await?;
        if old.is_empty() {
            return Ok(0);
        }
        old.reverse();
        old.truncate(self.options.compress_batch.max(1));
        let lines: Vec<String> = old.iter().map(|e| format!("- {}", e.content)).collect();
        let prompt = self
            .options
            .compress_prompt
            .replace("{episodes}", &lines.join("\n"));
        let answer = self.ask(&prompt, "compress").await?;
        let summary = text_field(&answer, "summary")
            .ok_or_else(|| failed("sleep compress: the answer has no summary".into()))?;
        let points = strings(answer.get("key_points"));
        let content = if points.is_empty() {
            summary.to_string()
        } else {
            format!("{summary} Key points: {}.", points.join("; "))
        };
        self.memory
            .put(MemoryEntry {
                key: fact_key("digest", "", &content),
                content,
                category: DIGEST_CATEGORY.to_string(),
                source: Some("sleep_compress".to_string()),
                ..MemoryEntry::default()
            })
            .await?;
        let keys: Vec<String> = old.into_iter().map(|e| e.key).collect();
        self.remove(&keys).await
    }

    /// Phase `reflect`: lessons from the recent episodes.
    async fn reflect(&self) -> Result<u64> {
        let mut recent = self
            .episodes(|age| age <= self.options.reflect_window_ms)
            .await?;
        if recent.len() < self.options.reflect_min_episodes.max(1) {
            return Ok(0);
        }
        recent.truncate(self.options.reflect_max_episodes);
        let lines: Vec<String> = recent
            .iter()
            .map(|e| {
                let head: String = e
                    .content
                    .chars()
                    .take(self.options.reflect_episode_chars)
                    .collect();
                format!("- {head}")
            })
            .collect();
        let prompt = self
            .options
            .reflection_prompt
            .replace("{episodes}", &lines.join("\n\n"));
        let reflection = self.ask(&prompt, "reflect").await?;
        let mut stored = 0;
        let summary = text_field(&reflection, "summary");
        let lessons = strings(reflection.get("lessons"));
        if summary.is_none() && lessons.is_empty() {
            return Err(failed(
                "sleep reflect: the answer has neither a summary nor lessons".into(),
            ));
        }
        let facts = summary
            .map(|s| ("daily_reflection", "reflection", s.to_string(), 0.8))
            .into_iter()
            .chain(
                lessons
                    .into_iter()
                    .take(self.options.max_lessons)
                    .map(|l| ("lesson_learned", "lesson", l, 0.7)),
            );
        for (subject, category, content, confidence) in facts {
            self.memory
                .put(MemoryEntry {
                    key: fact_key(category, subject, &content),
                    content,
                    category: category.to_string(),
                    subject: Some(subject.to_string()),
                    confidence: Some(confidence),
                    source: Some("sleep_reflection".to_string()),
                    ..MemoryEntry::default()
                })
                .await?;
            stored += 1;
        }
        Ok(stored)
    }

    /// Phase `generalize`: each large cluster of facts about one subject into one.
    async fn generalize(&self) -> Result<u64> {
        let mut clusters: BTreeMap<String, Vec<MemoryEntry>> = BTreeMap::new();
        for fact in self.all().await?.into_iter().filter(|e| self.is_fact(e)) {
            if let Some(subject) = fact.subject.clone() {
                clusters.entry(subject).or_default().push(fact);
            }
        }
        let mut large: Vec<(String, Vec<MemoryEntry>)> = clusters
            .into_iter()
            .filter(|(_, facts)| facts.len() >= self.options.generalize_min_facts.max(2))
            .collect();
        sort_stable_by_key(&mut large, |(_, facts)| (descending(facts.len() as u64), 0));
        let mut merged = 0;
        for (subject, facts) in large.into_iter().take(self.options.generalize_max_clusters) {
            let lines: Vec<String> = facts.iter().map(|f| format!("- {}", f.content)).collect();
            let prompt = self
                .options
                .generalize_prompt
                .replace("{facts}", &lines.join("\n"));
            let answer = self.ask(&prompt, "generalize").await?;
            let content = text_field(&answer, "content")
                .ok_or_else(|| failed("sleep generalize: the answer has no content".into()))?
                .to_string();
            let confidence = answer
                .get("confidence")
                .and_then(Value::as_f64)
                .filter(|c| c.is_finite())
                .unwrap_or(0.7)
                .clamp(0.0, 1.0);
            let mut categories: BTreeMap<&str, usize> = BTreeMap::new();
            for f in &facts {
                *categories.entry(f.category.as_str()).or_default() += 1;
            }
            let category = categories
                .iter()
                .max_by_key(|(_, n)| **n)
                .map_or("fact", |(c, _)| *c)
                .to_string();
            let key = fact_key("fact", &subject, &content);
            self.memory
                .put(MemoryEntry {
                    key: key.clone(),
                    content,
                    category,
                    subject: Some(subject),
                    confidence: Some(confidence),
                    source: Some("sleep_generalize".to_string()),
                    ..MemoryEntry::default()
                })
                .await?;
            let originals: Vec<String> = facts
                .into_iter()
                .map(|f| f.key)
                .filter(|k| *k != key)
                .collect();
            merged += self.remove(&originals).await?;
        }
        Ok(merged)
    }

    async fn phase(&self, name: &str) -> Result<u64> {
        let now = self.bus.clock().now_ms();
        match name {
            "review" => self.review().await,
            "prune" => self.prune(now).await,
            "compress" => self.compress().await,
            "reflect" => self.reflect().await,
            _ => self.generalize().await,
        }
    }

    /// Runs the phases until done or woken; emits `sleep_completed`.
    async fn sleep(&self, event: &BusEvent) -> Result<()> {
        let wake = Interrupt::new();
        {
            let mut s = self.state.borrow_mut();
            if s.wake.is_some() {
                return Ok(());
            }
            s.wake = Some(wake.clone());
        }
        let _awake = Awake(&self.state);
        let mut completed = Vec::new();
        let mut failures = Vec::new();
        let mut changes = Map::new();
        for name in SLEEP_PHASES {
            if wake.is_triggered() {
                break;
            }
            match self.phase(name).await {
                Ok(n) => {
                    completed.push(name);
                    changes.insert(name.to_string(), json!(n));
                }
                Err(e) => failures.push(json!({ "phase": name, "error": e.message() })),
            }
        }
        let mut data = Map::new();
        data.insert("phases_completed".into(), json!(completed));
        data.insert("interrupted".into(), json!(wake.is_triggered()));
        data.insert("phases_failed".into(), Value::Array(failures.clone()));
        data.insert("changes".into(), Value::Object(changes));
        let now = self.bus.clock().now_ms();
        self.bus.emit(BusEvent::new(
            "sleep_completed",
            event.agent_id.clone(),
            event.session_id.clone(),
            data,
            now,
        ));
        if failures.is_empty() {
            Ok(())
        } else {
            Err(failed(format!(
                "sleep: {} phase(s) failed: {}",
                failures.len(),
                Value::Array(failures)
            )))
        }
    }

    /// Keeps an `episode_summarized` summary in memory as an episode.
    async fn keep_episode(&self, event: &BusEvent) -> Result<()> {
        let Some(summary) = event.data.get("summary").and_then(Value::as_object) else {
            return Ok(());
        };
        let Some(text) = text_field(summary, "summary") else {
            return Ok(());
        };
        let title = text_field(summary, "title");
        let content = match title {
            Some(t) => format!("{t}: {text}"),
            None => text.to_string(),
        };
        let id = match event.data.get("episode_id") {
            Some(Value::String(s)) => s.clone(),
            Some(v) if !v.is_null() => v.to_string(),
            _ => fact_key("anon", "", &content),
        };
        let subject = event
            .data
            .get("user_id")
            .and_then(Value::as_str)
            .map(str::to_string);
        self.memory
            .put(MemoryEntry {
                key: format!("episode:{id}"),
                content,
                category: EPISODE_CATEGORY.to_string(),
                subject,
                source: Some("episode_summarizer".to_string()),
                ..MemoryEntry::default()
            })
            .await
    }

    /// Wakes a running sleep (the watcher of `message_received`).
    fn wake(&self) {
        let wake = self.state.borrow().wake.clone();
        if let Some(w) = wake {
            w.trigger();
        }
    }
}

/// One of the handler's registrations.
struct Registration {
    sleeper: Rc<Sleeper>,
    episodes: bool,
}

#[async_trait(?Send)]
impl EventHandler for Registration {
    async fn handle(&self, event: &BusEvent) -> Result<()> {
        if self.episodes {
            self.sleeper.keep_episode(event).await
        } else {
            self.sleeper.sleep(event).await
        }
    }
}

registered_until_dropped!(
    SleepHandler,
    "A sleep handler on `bus` writing to `memory`, registered until dropped.",
    (llm: Rc<dyn Llm>, memory: Rc<dyn MemoryStore>, options: SleepOptions)
);

impl SleepHandler {
    /// Registers a handler for as long as `bus` lives, until the returned
    /// subscription (the `sleep_started` and `episode_summarized` handlers and
    /// the `message_received` watcher) is detached.
    pub fn register(
        bus: &EventBus,
        llm: Rc<dyn Llm>,
        memory: Rc<dyn MemoryStore>,
        options: SleepOptions,
    ) -> Subscription {
        let sleeper = Rc::new(Sleeper {
            bus: bus.clone(),
            llm,
            memory,
            options,
            state: RefCell::default(),
        });
        let sleep = bus.on(
            "sleep_started",
            "sleep-handler",
            Rc::new(Registration {
                sleeper: sleeper.clone(),
                episodes: false,
            }),
        );
        let episodes = bus.on(
            "episode_summarized",
            "sleep-handler-episodes",
            Rc::new(Registration {
                sleeper: sleeper.clone(),
                episodes: true,
            }),
        );
        let weak = Rc::downgrade(&sleeper);
        let watcher = bus.watch(
            "message_received",
            Rc::new(move |_: &BusEvent| {
                if let Some(s) = weak.upgrade() {
                    s.wake();
                }
            }),
        );
        Subscription::new(bus, vec![sleep, episodes, watcher])
    }
}
