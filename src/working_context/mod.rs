//! The compiled, budget-aware view of a session, ready for a model call.

mod cache;
pub mod checker;
mod ledger;
mod media_limits;
mod media_parts;
mod provider;
mod provider_compaction;
mod zoned;

use std::borrow::Cow;
use std::cell::RefCell;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::budget::BudgetPlan;
use crate::tokens::TokenCounter;
use crate::zones::{CompactionLevel, Zone, ZoneUsage};

pub use crate::artifacts::ArtifactRef;
pub(crate) use crate::message::LayoutPart;
pub use crate::message::{HistoryMessage, Shared, ToolCallPart};
pub use crate::wire::names;
pub use crate::wire::ProviderFormat;
pub use cache::{CacheMiss, CacheReport, MissCause, PrefixTracker};
pub use ledger::{
    Excluded, ExcludedRow, ExclusionReason, Included, IncludedRow, InclusionReason, Ledger,
    LedgerColumns,
};
use provider::Placed;
pub use provider::EMPTY_OUTPUT;
pub(crate) use provider_compaction::items_tokens as provider_compaction_tokens;
pub use provider_compaction::ProviderCompaction;
pub(crate) use zoned::{
    message_tokens as zoned_message_tokens, reasoning_tokens, recent_start, working_range,
};

/// The user message put before a conversation that would otherwise start
/// with the assistant (a greeting, or a tool exchange whose question was
/// cut or folded): providers such as Anthropic need a user turn first. The
/// same bytes every call, so the prompt prefix holds; counted in the budget.
pub const CONVERSATION_START: &str = "[conversation start]";

/// Whether `text` renders: it is not empty or only whitespace (providers
/// refuse whitespace-only text blocks; such text is left out).
pub(crate) fn has_text(text: &str) -> bool {
    // Most texts start with a visible ASCII character: no need to trim.
    text.as_bytes().first().is_some_and(u8::is_ascii_graphic) || !text.trim().is_empty()
}

impl HistoryMessage {
    /// Whether the message renders at all: a tool result, tool calls,
    /// media, or text that is not only whitespace.
    pub(crate) fn renders(&self) -> bool {
        self.is_tool_result()
            || !self.tool_calls.is_empty()
            || has_text(&self.content)
            || !self.media.is_empty()
    }
}

/// Where a [`CONVERSATION_START`] goes in `history`: before its first
/// message that renders, when that is not a user's; at the end when none
/// renders (a request needs a user turn).
pub(crate) fn placeholder_at(history: &[Shared]) -> Option<usize> {
    match history
        .iter()
        .position(|m| m.role != "system" && m.renders())
    {
        Some(i) => (history[i].role != "user").then_some(i),
        None => Some(history.len()),
    }
}

/// The [`CONVERSATION_START`] message, in `zone`.
pub(crate) fn conversation_start(zone: Option<Zone>) -> HistoryMessage {
    let mut m = HistoryMessage::new("user", CONVERSATION_START);
    m.zone = zone;
    m
}

impl HistoryMessage {
    /// Whether `self` and `other` render alike in a format that does not
    /// read zones (plain, Chat Completions): equal in every field but the
    /// zone, the cached count and the log position. Every field is named
    /// here, so that a new one is decided on.
    pub fn renders_as(&self, other: &HistoryMessage) -> bool {
        let HistoryMessage {
            role,
            content,
            event_id,
            tool_calls,
            tool_call_id,
            tool_name,
            is_error,
            artifact,
            masked,
            zone: _,
            tokens: _,
            position: _,
            reasoning,
            media,
            part,
            whole_of: _,
        } = self;
        *role == other.role
            && *content == other.content
            && *event_id == other.event_id
            && *tool_calls == other.tool_calls
            && *tool_call_id == other.tool_call_id
            && *tool_name == other.tool_name
            && *is_error == other.is_error
            && *artifact == other.artifact
            && *masked == other.masked
            && *reasoning == other.reasoning
            && *media == other.media
            && *part == other.part
    }
}

/// How a compiled context lays its parts out in messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// One system message holding the prompt, memories, artifact handles and
    /// tool results, then the conversation (the default).
    #[default]
    SingleSystem,
    /// The four zones (SYSTEM, PERSISTENT, WORKING, RECENT): a byte-stable
    /// prefix, tool calls and results as paired messages, and what changes
    /// per call at the end.
    Zoned,
}

/// A memory recalled into the context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryHit {
    /// The memory's key.
    pub key: String,
    /// The memory's text.
    pub content: String,
    /// The memory's category.
    #[serde(default)]
    pub category: String,
    /// Cached token count of `content`.
    #[serde(skip)]
    pub tokens: Option<u64>,
}

/// A tool result shown inline in the context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// The tool's name.
    pub tool: String,
    /// The result text (JSON results are serialised).
    pub result: String,
    /// The session event this result came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_id: Option<String>,
    /// Cached token count of `result`.
    #[serde(skip)]
    pub tokens: Option<u64>,
}

/// A turn recalled from earlier in the session because it bears on the
/// newest user message (zoned layout: RECENT zone, after that message, in
/// `## Recalled from earlier in this conversation`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct RecalledTurn {
    /// The session event it comes from.
    pub event_id: String,
    /// The event's position in the session log.
    pub position: usize,
    /// `user`, `assistant` or `tool`.
    pub role: String,
    /// Its text as shown (a long one is cut after its start).
    pub content: String,
    /// When it was recorded, in milliseconds since the Unix epoch.
    pub timestamp: f64,
    /// The search score that brought it; 0 for a turn brought as the
    /// neighbour of one that matched.
    pub score: f64,
}

/// The part of a context an item lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Section {
    /// The system prompt.
    SystemPrompt,
    /// Conversation history.
    History,
    /// Recalled memories.
    MemoryHits,
    /// Artifact references.
    ArtifactRefs,
    /// Inline tool results.
    ToolResults,
    /// Turns recalled from earlier in the session (zoned layout).
    Recalled,
    /// The compaction summary (zoned layout).
    Summary,
    /// The goal (zoned layout).
    Goal,
    /// The task state (zoned layout).
    TaskState,
    /// Reasoning a turn would send back to the provider (its thinking
    /// blocks or reasoning items, dropped whole).
    Reasoning,
}

/// What the budget step did to an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub enum DropAction {
    /// The item was removed.
    Dropped,
    /// The item's text was cut.
    Truncated,
    /// The item was folded into the compaction summary (its facts stay
    /// there; the event stays searchable and recallable).
    Summarized,
    /// The item (a tool output) was replaced by a placeholder by light
    /// compaction (the event stays searchable and recallable).
    Masked,
    /// An image or file the request's provider would refuse (over its
    /// size, dimension or count limits): its reference line is sent instead,
    /// saying why.
    Refused,
}

/// A record of an item the compiler dropped or truncated to fit the budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DroppedItem {
    /// Where the item was.
    pub section: Section,
    /// Why it left: dropped for the budget, truncated, summarised or masked.
    pub action: DropAction,
    /// The session event it came from, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_id: Option<String>,
    /// Tokens removed from the context.
    pub tokens_removed: u64,
    /// The memory's key, for a memory hit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

impl DroppedItem {
    /// A record of `tokens` removed from `section`, from event `event_id`.
    pub fn new(
        section: Section,
        action: DropAction,
        event_id: Option<String>,
        tokens: u64,
    ) -> Self {
        DroppedItem {
            section,
            action,
            event_id,
            tokens_removed: tokens,
            key: None,
        }
    }
}

/// `messages` (from [`WorkingContext::messages_rendered_alone`]) in
/// `format`, each rendered on its own: the messages
/// [`WorkingContext::to_provider_messages`] renders for them.
pub fn render_each(messages: Vec<Shared>, format: ProviderFormat) -> Vec<Value> {
    match format {
        ProviderFormat::OpenAi => provider::openai_each(
            messages
                .into_iter()
                .map(|message| Placed {
                    zone: message.zone,
                    message,
                })
                .collect(),
        ),
        _ => messages
            .iter()
            .map(|m| {
                let m = zoned::plain_message(m);
                serde_json::json!({"role": m.role, "content": m.content})
            })
            .collect(),
    }
}

/// One message of a context as the layout lays it out: a turn of the
/// conversation, borrowed, beside the zone it is in; or a message the
/// layout writes itself (its zone set).
pub(crate) enum ContextPart<'a> {
    /// A turn of `history` and its zone.
    Turn(&'a Shared, Zone),
    /// A message of the layout's own.
    Own(Box<HistoryMessage>),
}

impl ContextPart<'_> {
    /// The message, its zone set.
    fn into_message(self) -> HistoryMessage {
        match self {
            ContextPart::Turn(h, zone) => {
                let mut m = HistoryMessage::clone(h);
                m.zone = Some(zone);
                m
            }
            ContextPart::Own(m) => *m,
        }
    }
}

impl From<HistoryMessage> for ContextPart<'_> {
    fn from(m: HistoryMessage) -> Self {
        ContextPart::Own(Box::new(m))
    }
}

/// A chat message for a provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Message {
    /// `system`, `user`, `assistant`, ...
    pub role: String,
    /// The message text.
    pub content: String,
}

/// Budget-aware compiled context for a model call (the fields, plus
/// the record of what the budget step dropped).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkingContext {
    /// The system prompt.
    pub system_prompt: String,
    /// Conversation history, oldest first. Each message is shared: with
    /// the session's own rendering of its event (see [`Shared`]), and with
    /// the contexts compiled before from the same session; a processor
    /// changes one with [`Rc::make_mut`], which copies it first when it is
    /// shared.
    #[serde(default)]
    pub history: Vec<Shared>,
    /// Recalled memories.
    #[serde(default)]
    pub memory_hits: Vec<MemoryHit>,
    /// References to externalised payloads.
    #[serde(default)]
    pub artifact_refs: Vec<ArtifactRef>,
    /// Tool results shown inline.
    #[serde(default)]
    pub tool_results: Vec<ToolResult>,
    /// Turns recalled from earlier in the session (zoned layout).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recalled: Vec<RecalledTurn>,
    /// Tokens of the context. After a compile, exactly the counter's count of
    /// [`WorkingContext::to_messages`].
    #[serde(default)]
    pub token_count: u64,
    /// The budget this context was fitted to, in the counter's tokens: the
    /// compile's budget, less what its [`BudgetPlan`] keeps back.
    #[serde(default)]
    pub budget: u64,
    /// How the compile's budget became `budget` (reply reserve, usage
    /// correction, margin); set by a compile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_plan: Option<BudgetPlan>,
    /// Tokens of the tool definitions the request carries beside the
    /// messages, counted in the SYSTEM zone (set by a compile given tools).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tool_tokens: u64,
    /// How the compile prices images and files (its format and model).
    #[serde(skip)]
    pub media_pricing: crate::media::cost::MediaPricing,
    /// What the compiler dropped or truncated to fit the budget.
    #[serde(default)]
    pub dropped: Vec<DroppedItem>,
    /// How the context is laid out in messages.
    #[serde(default)]
    pub layout: Layout,
    /// Active policies (zoned layout: SYSTEM zone, `## Policies`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub policies: Vec<String>,
    /// Tool definitions, each with a `name` (zoned layout: SYSTEM zone,
    /// `## Available Tools`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_definitions: Vec<Value>,
    /// User preferences (zoned layout: SYSTEM zone, `## User Preferences`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_preferences: Option<Value>,
    /// The goal (zoned layout: PERSISTENT zone, restated at the end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    /// Memories pinned for the session (zoned layout: PERSISTENT zone,
    /// `## Pinned memories`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pinned_memories: Vec<MemoryHit>,
    /// A digest of the agent's state (zoned layout: PERSISTENT zone,
    /// `## Brain State`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_digest: Option<Value>,
    /// The current task state (zoned layout: RECENT zone, `## Current Task`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_state: Option<String>,
    /// The compaction summary of earlier conversation (zoned layout: start
    /// of the WORKING zone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The compaction level the compile's utilisation called for.
    #[serde(default)]
    pub compaction_level: CompactionLevel,
    /// Tokens per zone of the compiled messages.
    #[serde(default)]
    pub zone_usage: ZoneUsage,
    /// How much of the context repeats the previous compile's (of the same
    /// session, by the same compiler), and what broke the rest; set by a
    /// compile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheReport>,
    /// Token counts of the zone sections' texts, remembered between
    /// measures (a cache; `Default` when building a context by hand).
    #[serde(skip)]
    pub section_tokens: SectionTokens,
    /// How many of the session's events the compile read (its log's length
    /// then; 0 for a context built by hand): the ledger's `window` entry
    /// counts the conversation events among them that the context neither
    /// holds nor reports left out.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub events_seen: usize,
    /// The provider's own compaction the request sends first, in place of
    /// the turns before it (a compile in its format; see
    /// [`crate::session::provider_compaction`]); counted in WORKING.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_compaction: Option<ProviderCompaction>,
}

/// A small cache of token counts keyed by a text's hash, so a long system
/// prompt is counted once per compile rather than after every processor.
#[derive(Debug, Default, Clone)]
pub struct SectionTokens(RefCell<Vec<(u64, usize, u64)>>);

impl PartialEq for SectionTokens {
    /// A cache never makes two contexts differ.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl SectionTokens {
    /// How many texts are remembered.
    const SIZE: usize = 8;

    /// `counter`'s count of `text`, remembered.
    pub(crate) fn count(&self, counter: &dyn TokenCounter, text: &str) -> u64 {
        if text.len() < 256 {
            return counter.count(text);
        }
        let mut h = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut h);
        let key = (h.finish(), text.len());
        let mut memo = self.0.borrow_mut();
        if let Some(&(_, _, n)) = memo.iter().find(|(k, l, _)| (*k, *l) == key) {
            return n;
        }
        let n = counter.count(text);
        if memo.len() >= Self::SIZE {
            memo.remove(0);
        }
        memo.push((key.0, key.1, n));
        n
    }
}

pub(crate) const MEMORY_HEADER: &str = "\n\n## Relevant memories";
pub(crate) const ARTIFACT_HEADER: &str = "\n\n## Available artifacts (use handle to retrieve)";
pub(crate) const TOOL_HEADER: &str = "\n\n## Recent tool results";

impl WorkingContext {
    /// An empty context holding only a system prompt.
    pub fn new(system_prompt: impl Into<String>, budget: u64) -> Self {
        WorkingContext {
            system_prompt: system_prompt.into(),
            budget,
            ..WorkingContext::default()
        }
    }

    /// Whether `token_count` is at most `budget`.
    pub fn is_within_budget(&self) -> bool {
        self.token_count <= self.budget
    }

    /// Tokens beyond the budget (zero when within it).
    pub fn overflow(&self) -> u64 {
        self.token_count.saturating_sub(self.budget)
    }

    /// The system message's content: the prompt, then memories, artifact
    /// handles and tool results, formatted as text.
    pub fn system_content(&self) -> String {
        let mut parts: Vec<String> = vec![self.system_prompt.clone()];
        if !self.memory_hits.is_empty() {
            parts.push(MEMORY_HEADER.to_string());
            parts.extend(self.memory_hits.iter().map(memory_line));
        }
        if !self.artifact_refs.is_empty() {
            parts.push(ARTIFACT_HEADER.to_string());
            parts.extend(self.artifact_refs.iter().map(artifact_line));
        }
        if !self.tool_results.is_empty() {
            parts.push(TOOL_HEADER.to_string());
            parts.extend(self.tool_results.iter().map(tool_line));
        }
        parts.join("\n")
    }

    /// The provider messages in the plain `{ role, content }` form.
    ///
    /// Single-system layout: one system message, then the history. Zoned layout: the
    /// zones' messages (see [`WorkingContext::context_messages`]), with tool
    /// calls written into their assistant message's text and tool results as
    /// `user` messages, so any chat API takes them.
    pub fn to_messages(&self) -> Vec<Message> {
        provider::prepared(self.placed_messages())
            .iter()
            .map(|m| zoned::plain_message(m))
            .collect()
    }

    /// The messages in provider `format` (see [`ProviderFormat`]), as JSON,
    /// for the model the compile was for, when it named one (see
    /// [`WorkingContext::to_provider_messages_for`]).
    pub fn to_provider_messages(&self, format: ProviderFormat) -> Value {
        match &self.media_pricing.model {
            Some(model) => self.to_provider_messages_for(format, model),
            None => self.render(format),
        }
    }

    /// The messages `format` renders, prepared as every format prepares
    /// them, when it renders each of them as one message of its own: plain,
    /// and Chat Completions when no message carries an image or a file (whose
    /// parts may move to a message after a turn's tool results). `None` for
    /// the other formats and cases. [`render_each`] of them is what
    /// [`WorkingContext::to_provider_messages`] renders, a message at a time,
    /// so a caller may render only the messages that changed since it last
    /// rendered.
    ///
    /// The conversation's turns are shared with `history` where preparing
    /// leaves them as they are, without their zone (which neither format
    /// reads): a message the same as one a caller kept from an earlier call
    /// is often the same allocation ([`Rc::ptr_eq`]).
    pub fn messages_rendered_alone(&self, format: ProviderFormat) -> Option<Vec<Shared>> {
        if !matches!(format, ProviderFormat::Plain | ProviderFormat::OpenAi) {
            return None;
        }
        let mut messages = Vec::with_capacity(self.history.len() + 4);
        for part in self.context_parts() {
            let prepared = match part {
                ContextPart::Turn(h, _) => match provider::prepare(h) {
                    Some(Cow::Borrowed(_)) => Some(Rc::clone(h)),
                    Some(Cow::Owned(changed)) => Some(Rc::new(changed)),
                    None => None,
                },
                ContextPart::Own(m) => match provider::prepare(&m) {
                    Some(Cow::Borrowed(_)) => Some(Rc::new(*m)),
                    Some(Cow::Owned(changed)) => Some(Rc::new(changed)),
                    None => None,
                },
            };
            match prepared {
                Some(m) if !m.media.is_empty() => return None,
                Some(m) if format == ProviderFormat::OpenAi && provider::openai_omits(&m) => {}
                Some(m) => messages.push(m),
                None => {}
            }
        }
        Some(messages)
    }

    fn render(&self, format: ProviderFormat) -> Value {
        let mut request = match format {
            ProviderFormat::Plain => serde_json::to_value(self.to_messages())
                .unwrap_or_else(|_| Value::Array(Vec::new())),
            other => provider::render(self.placed_messages(), other),
        };
        if let Some(c) = &self.provider_compaction {
            c.send(&mut request, format);
        }
        request
    }

    /// [`WorkingContext::to_provider_messages`] for `model`: in the
    /// Anthropic format, a cache breakpoint whose prefix is below the
    /// model family's minimum cacheable length (see
    /// [`checker::anthropic_min_cacheable`]) is left out, so none of the
    /// four is wasted. Other formats and unknown models render as without
    /// a model.
    pub fn to_provider_messages_for(&self, format: ProviderFormat, model: &str) -> Value {
        let mut request = self.render(format);
        if format == ProviderFormat::Anthropic {
            if let Some(min) = checker::anthropic_min_cacheable(model) {
                // A removed mark shortens the prefix of the marks after it:
                // measure again after each.
                while let Some(mark) = checker::anthropic_cache_marks(&request)
                    .into_iter()
                    .find(|m| m.below(min))
                {
                    match request.pointer_mut(&mark.path) {
                        Some(Value::Object(block)) => {
                            block.remove("cache_control");
                        }
                        _ => break,
                    }
                }
            }
        }
        request
    }

    /// The exact token count of [`WorkingContext::to_messages`] under `counter`:
    /// each message's content plus the counter's per-message overhead.
    ///
    /// A history message's cached count is used when present: it is the
    /// counter's count of that very rendering (every change to the content
    /// clears it), so the result is exact without re-reading the text.
    pub fn exact_token_count(&self, counter: &dyn TokenCounter) -> u64 {
        self.zone_usage_of(counter).total()
    }

    /// Tokens per zone of the compiled messages. In the single-system layout the
    /// system message is the SYSTEM zone and the history from the newest
    /// user message on is RECENT.
    pub fn zone_usage_of(&self, counter: &dyn TokenCounter) -> ZoneUsage {
        match self.layout {
            Layout::SingleSystem => {
                let overhead = counter.message_overhead();
                let mut usage = ZoneUsage::default();
                usage.add(
                    Zone::System,
                    counter.count(&self.system_content()) + overhead + self.tool_tokens,
                );
                let recent = zoned::recent_start(&self.history);
                let seed_zone = |i: usize| single_system_zone(i, recent);
                for (i, h) in self.history.iter().enumerate() {
                    let Some(tokens) = zoned::prepared_tokens(h, counter) else {
                        continue;
                    };
                    usage.add(seed_zone(i), tokens + overhead);
                }
                if let Some(i) = placeholder_at(&self.history) {
                    let zone = if i < self.history.len() {
                        seed_zone(i)
                    } else {
                        Zone::Recent
                    };
                    usage.add(zone, counter.count(CONVERSATION_START) + overhead);
                }
                if let Some(c) = &self.provider_compaction {
                    usage.add(Zone::Working, c.tokens);
                }
                usage
            }
            Layout::Zoned => zoned::usage(self, counter),
        }
    }

    /// The zoned layout's messages with their zones: SYSTEM (prompt,
    /// policies, tools, preferences), PERSISTENT (goal, state digest, then
    /// pinned turns), WORKING (the compaction summary, older turns and tool
    /// exchanges), RECENT (from the newest user message on, then one
    /// message with per-turn memory hits, artifacts, tool results, the task
    /// state and the goal restated last). In the single-system layout: the system
    /// message, then the history.
    pub fn context_messages(&self) -> Vec<HistoryMessage> {
        self.context_parts()
            .into_iter()
            .map(ContextPart::into_message)
            .collect()
    }

    /// [`WorkingContext::context_messages`] as the renderers read them:
    /// the conversation's turns shared, not copied, beside their zones.
    fn placed_messages(&self) -> Vec<Placed> {
        self.context_parts()
            .into_iter()
            .map(|part| match part {
                ContextPart::Turn(h, zone) => Placed {
                    message: Rc::clone(h),
                    zone: Some(zone),
                },
                ContextPart::Own(m) => Placed::own(*m),
            })
            .collect()
    }

    /// [`WorkingContext::context_messages`], the conversation's turns
    /// borrowed beside their zones.
    fn context_parts(&self) -> Vec<ContextPart<'_>> {
        match self.layout {
            Layout::SingleSystem => {
                let mut out: Vec<ContextPart<'_>> = Vec::with_capacity(self.history.len() + 1);
                let mut system = HistoryMessage::new("system", self.system_content());
                system.zone = Some(Zone::System);
                out.push(system.into());
                let recent = zoned::recent_start(&self.history);
                let placeholder = placeholder_at(&self.history);
                for (i, h) in self.history.iter().enumerate() {
                    let zone = single_system_zone(i, recent);
                    if placeholder == Some(i) {
                        out.push(conversation_start(Some(zone)).into());
                    }
                    out.push(ContextPart::Turn(h, zone));
                }
                if placeholder == Some(self.history.len()) {
                    out.push(conversation_start(Some(Zone::Recent)).into());
                }
                out
            }
            Layout::Zoned => zoned::parts(self),
        }
    }

    /// Sends as their reference lines the images and files that `format`'s
    /// provider would refuse (see [`media_limits`]), recording each message
    /// that lost some in `dropped` ([`DropAction::Refused`]).
    pub(crate) fn withhold_refused_media(&mut self, format: ProviderFormat) {
        for (i, tokens) in media_limits::keep_within(&mut self.history, format, true) {
            let event_id = self.history[i].event_id.clone();
            self.dropped.push(DroppedItem::new(
                Section::History,
                DropAction::Refused,
                event_id,
                tokens,
            ));
        }
    }

    /// Measures a zoned context (see [`WorkingContext::measure`]) and
    /// returns its tokens per zone, in one walk of its history.
    pub(crate) fn measure_zones(&mut self, counter: &dyn TokenCounter) -> ZoneUsage {
        for h in &mut self.history {
            if h.tokens.is_none() {
                let tokens = zoned::message_tokens(h, counter);
                Rc::make_mut(h).tokens = Some(tokens);
            }
        }
        let usage = zoned::usage(self, counter);
        self.token_count = usage.total();
        usage
    }

    /// A fast estimate of the token count from cached per-item counts (items
    /// without a cached count are counted and cached). Used between
    /// processors; the compiler's last step replaces it with the exact count.
    /// In the zoned layout it is exact.
    pub fn measure(&mut self, counter: &dyn TokenCounter) -> u64 {
        if self.layout == Layout::Zoned {
            return self.measure_zones(counter).total();
        }
        let overhead = counter.message_overhead();
        let mut total = counter.count(&self.system_prompt) + overhead + self.tool_tokens;
        if !self.memory_hits.is_empty() {
            total += counter.count(MEMORY_HEADER) + 1;
        }
        for m in &mut self.memory_hits {
            total += *m.tokens.get_or_insert_with(|| counter.count(&m.content))
                + counter.count(&m.key)
                + 3;
        }
        if !self.artifact_refs.is_empty() {
            total += counter.count(ARTIFACT_HEADER) + 1;
        }
        for a in &mut self.artifact_refs {
            total += *a.tokens.get_or_insert_with(|| counter.count(&a.summary))
                + counter.count(&a.handle)
                + 8;
        }
        if !self.tool_results.is_empty() {
            total += counter.count(TOOL_HEADER) + 1;
        }
        for t in &mut self.tool_results {
            total += *t.tokens.get_or_insert_with(|| counter.count(&t.result))
                + counter.count(&t.tool)
                + 3;
        }
        for h in &mut self.history {
            let tokens = match h.tokens {
                Some(t) => t,
                None => {
                    let tokens = zoned::message_tokens(h, counter);
                    Rc::make_mut(h).tokens = Some(tokens);
                    tokens
                }
            };
            total += tokens + overhead;
        }
        total += self.provider_compaction.as_ref().map_or(0, |c| c.tokens);
        self.token_count = total;
        total
    }
}

/// The zone of the history message at `index` in the single-system layout:
/// RECENT from the newest user message (at `recent`) on, WORKING before.
pub(crate) fn single_system_zone(index: usize, recent: usize) -> Zone {
    if index >= recent {
        Zone::Recent
    } else {
        Zone::Working
    }
}

fn is_zero<T: Default + PartialEq>(n: &T) -> bool {
    *n == T::default()
}

pub(crate) fn memory_line(hit: &MemoryHit) -> String {
    format!("- [{}]: {}", hit.key, hit.content)
}

pub(crate) fn artifact_line(r: &ArtifactRef) -> String {
    format!("- [{}] ({} bytes): {}", r.handle, r.size_bytes, r.summary)
}

pub(crate) fn tool_line(t: &ToolResult) -> String {
    format!("- {}: {}", t.tool, t.result)
}

pub(crate) fn recalled_line(r: &RecalledTurn) -> String {
    format!("- {}: {}", r.role, r.content)
}

/// The recalled turns as lines, oldest first: each run of turns said in the
/// same minute under one `[YYYY-MM-DD HH:MM UTC]` line, then a line per turn.
pub(crate) fn recalled_lines(recalled: &[RecalledTurn]) -> Vec<String> {
    let mut lines = Vec::with_capacity(recalled.len() + 1);
    let mut minute = None;
    for r in recalled {
        let at = crate::zones::utc_minute(r.timestamp);
        if minute.as_ref() != Some(&at) {
            lines.push(format!("[{at}]"));
            minute = Some(at);
        }
        lines.push(recalled_line(r));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::DefaultTokenCounter;

    fn ctx(token_count: u64, budget: u64) -> WorkingContext {
        WorkingContext {
            system_prompt: "You are a helpful assistant.".into(),
            history: vec![HistoryMessage::new("user", "hello").into()],
            token_count,
            budget,
            ..WorkingContext::default()
        }
    }

    // The test_budget_checking.
    #[test]
    fn budget_checking() {
        let within = ctx(50, 100);
        assert!(within.is_within_budget());
        assert_eq!(within.overflow(), 0);
        let over = ctx(150, 100);
        assert!(!over.is_within_budget());
        assert_eq!(over.overflow(), 50);
    }

    // The test_to_messages.
    #[test]
    fn to_messages_formats_like_the_seed() {
        let ctx = WorkingContext {
            system_prompt: "You are helpful.".into(),
            history: vec![
                HistoryMessage::new("user", "What is 2+2?").into(),
                HistoryMessage::new("assistant", "4").into(),
            ],
            memory_hits: vec![MemoryHit {
                key: "math".into(),
                content: "basic arithmetic".into(),
                category: String::new(),
                tokens: None,
            }],
            artifact_refs: vec![ArtifactRef {
                handle: "abc123".into(),
                summary: "large file".into(),
                size_bytes: 5000,
                source: String::new(),
                event_id: None,
                tokens: None,
            }],
            tool_results: vec![ToolResult {
                tool: "calc".into(),
                result: "4".into(),
                event_id: None,
                tokens: None,
            }],
            token_count: 80,
            budget: 200,
            ..WorkingContext::default()
        };
        let msgs = ctx.to_messages();
        assert_eq!(msgs[0].role, "system");
        assert!(msgs[0].content.contains("You are helpful."));
        assert!(msgs[0].content.contains("basic arithmetic"));
        assert!(msgs[0].content.contains("abc123"));
        assert!(msgs[0]
            .content
            .contains("- [abc123] (5000 bytes): large file"));
        assert!(msgs[0].content.contains("- calc: 4"));
        assert_eq!(msgs[1].role, "user");
        assert_eq!(msgs[2].role, "assistant");
    }

    #[test]
    fn measure_is_close_to_exact_and_exact_matches_messages() {
        let c = DefaultTokenCounter;
        let mut ctx = ctx(0, 100);
        let estimate = ctx.measure(&c);
        let exact = ctx.exact_token_count(&c);
        let by_hand: u64 = ctx
            .to_messages()
            .iter()
            .map(|m| c.count(&m.content) + c.message_overhead())
            .sum();
        assert_eq!(exact, by_hand);
        assert!(estimate.abs_diff(exact) <= 2);
    }
}
