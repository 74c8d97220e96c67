//! A message of a compiled context's history: what a compile selects from
//! a session's events, shared between compiles (see
//! [`crate::session::EventLog::keep_message`]) and changed copy-on-write.

use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::artifacts::ArtifactRef;
use crate::zones::Zone;

/// A history message as a compiled context holds it: reference-counted,
/// so that compiles share the messages they select from the same events
/// instead of copying them, and changed copy-on-write ([`Rc::make_mut`]).
pub type Shared = Rc<HistoryMessage>;

/// A history message owned or shared: what code that changes messages of
/// either kind takes.
pub(crate) trait MessageMut {
    /// The message, to read.
    fn message(&self) -> &HistoryMessage;
    /// The message, to change (a shared one is copied first when another
    /// holder shares it).
    fn message_mut(&mut self) -> &mut HistoryMessage;
}

impl MessageMut for HistoryMessage {
    fn message(&self) -> &HistoryMessage {
        self
    }
    fn message_mut(&mut self) -> &mut HistoryMessage {
        self
    }
}

impl MessageMut for Shared {
    fn message(&self) -> &HistoryMessage {
        self
    }
    fn message_mut(&mut self) -> &mut HistoryMessage {
        Rc::make_mut(self)
    }
}

/// A conversation turn in a compiled context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryMessage {
    /// `user`, `assistant`, or any role the provider accepts.
    pub role: String,
    /// The message text.
    pub content: String,
    /// The session event this message came from, when it came from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_id: Option<String>,
    /// Tool calls an assistant message makes (zoned layout).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallPart>,
    /// The call a `tool` message answers (zoned layout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The tool a `tool` message comes from (zoned layout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// Whether a `tool` message reports an error or a timeout.
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_error: bool,
    /// The artifact a `tool` message's output was externalised to; the
    /// content is then the handle and summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<ArtifactRef>,
    /// Whether a `tool` message's output was masked by compaction (the
    /// content is a summary; the output stays in the session and store).
    #[serde(default, skip_serializing_if = "is_false")]
    pub masked: bool,
    /// The zone the message is pinned to (`persistent` for the first turns
    /// a history selector keeps); otherwise its place decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<Zone>,
    /// Cached token count of the message's plain rendering (`content`, plus
    /// its tool calls or tool-result label); `None` when unknown or stale.
    #[serde(skip)]
    pub tokens: Option<u64>,
    /// Position of the source event in the session's log (what compaction
    /// records; a made-up position is checked against the log and ignored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<usize>,
    /// Reasoning the provider asks back with this assistant turn
    /// (`{ format, items }`, see [`crate::wire::Reasoning`]); rendered in
    /// its own format only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<Value>,
    /// Images and files the message carries (a user's, or a tool
    /// result's), each with what it costs; rendered as each format takes
    /// them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<crate::media::MediaPart>,
    /// Which of the zoned layout's own messages this is (`None` for a
    /// conversation message): the renderers place cache marks by it.
    #[serde(skip)]
    pub(crate) part: Option<LayoutPart>,
    /// An unread tool output shown whole (see
    /// [`crate::compiler::ArtifactAttacher::keep_unread`]): the artifact it
    /// is stored as, whose handle and summary the final fit shows instead
    /// when the budget cannot hold the whole text.
    #[serde(skip)]
    pub(crate) whole_of: Option<ArtifactRef>,
}

/// The messages the zoned layout writes itself, around the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LayoutPart {
    /// The pinned memories and the compaction summary: one user message
    /// right after the leading system messages.
    Memory,
    /// The per-turn tail: recalled turns, memories, artifacts, tool
    /// results, the task state and the goal restated; one user message, last.
    Tail,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl HistoryMessage {
    /// A message with the given role and content.
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> Self {
        HistoryMessage {
            role: role.into(),
            content: content.into(),
            event_id: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
            is_error: false,
            artifact: None,
            masked: false,
            zone: None,
            tokens: None,
            position: None,
            reasoning: None,
            media: Vec::new(),
            part: None,
            whole_of: None,
        }
    }

    /// Whether the message is a tool result.
    pub fn is_tool_result(&self) -> bool {
        self.tool_call_id.is_some()
    }

    /// Takes the message's images and files out of the context, leaving a
    /// line per part saying what it was and where its bytes stay; returns
    /// the tokens they were priced at.
    pub fn strip_media(&mut self) -> u64 {
        let saved = self.media.iter().filter_map(|p| p.tokens).sum();
        for part in std::mem::take(&mut self.media) {
            if !self.content.is_empty() {
                self.content.push('\n');
            }
            self.content
                .push_str(&format!("{} (left out to save context)", part.reference()));
        }
        self.tokens = None;
        saved
    }
}

/// A tool call made by an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallPart {
    /// The call's id, shared with its result.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The call's arguments (any JSON value; usually an object).
    #[serde(default)]
    pub arguments: Value,
    /// The thought signature the provider gave the call (Gemini), sent
    /// back with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// The `tool_call` event it was recorded as (none for a call
    /// synthesised for an outcome recorded without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_id: Option<String>,
}
