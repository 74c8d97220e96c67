//! The append-only event log and its indices.

use std::borrow::Cow;
use std::cell::{Cell, OnceCell, RefCell};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::artifacts::ArtifactRef;
use crate::clock::{Clock, IdRng};
use crate::error::{Error, ErrorCode, Result};
use crate::message::{HistoryMessage, Shared};
use crate::session::approvals::{self, Approvals, PendingApproval};
use crate::session::calls::CallPairs;
use crate::session::kinds::{
    APPROVAL_DECIDED, APPROVAL_REQUESTED, ARTIFACT_STORED, CONTEXT_COMPACTED, MEMORY_HIT,
    MODEL_USAGE, TOOL_CALL, USER_INPUT,
};
use crate::session::render::{self, Rendered};
use crate::session::usage::UsageCorrection;
use crate::tokens::kind::{ContentKind, ContentTokens};
use crate::tokens::TokenCounter;
use crate::zones::CompactionLevel;

/// How deep event data may nest. An export wraps each event in three more
/// levels (document, events array, event) and a stored segment in two, so
/// every event a log accepts round-trips through `serde_json`'s limit of 128.
pub const MAX_DATA_DEPTH: usize = 100;

/// How deep `value` nests (a scalar is 0, `[]` and `{}` are 1). Only
/// containers are stacked, so data whose members are scalars allocates
/// nothing.
fn depth(value: &Value) -> usize {
    fn containers<'a>(
        stack: &mut Vec<(&'a Value, usize)>,
        children: impl Iterator<Item = &'a Value>,
        depth: usize,
    ) {
        stack.extend(
            children
                .filter(|c| matches!(c, Value::Array(_) | Value::Object(_)))
                .map(|c| (c, depth)),
        );
    }
    let mut deepest = 0;
    let mut stack = Vec::new();
    let mut at = Some((value, 0usize));
    while let Some((v, d)) = at.take().or_else(|| stack.pop()) {
        match v {
            Value::Array(items) => containers(&mut stack, items.iter(), d + 1),
            Value::Object(map) => containers(&mut stack, map.values(), d + 1),
            _ => continue,
        }
        deepest = deepest.max(d + 1);
    }
    deepest
}

/// `{ms:012x}-{seq:06x}{random:06x}`, written without the formatting
/// machinery (it runs for every event).
fn event_id(ms: u64, seq: u32, random: u64) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut id = [0u8; 25];
    let mut put = |at: usize, digits: usize, value: u64| {
        for i in 0..digits {
            id[at + i] = HEX[((value >> (4 * (digits - 1 - i))) & 0xF) as usize];
        }
    };
    put(0, 12, ms);
    put(13, 6, u64::from(seq));
    put(19, 6, random);
    id[12] = b'-';
    // Hex digits and a dash: always UTF-8.
    String::from_utf8(id.to_vec()).unwrap_or_default()
}

/// A typed event in the session timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct SessionEvent {
    /// Time-sortable id: `{milliseconds:012x}-{sequence:06x}{random:06x}`.
    pub event_id: String,
    /// Milliseconds since the Unix epoch; never decreases along the log.
    pub timestamp: f64,
    /// The event kind, e.g. `"user_input"` or `"tool_success"`.
    pub kind: String,
    /// The event payload, any JSON value.
    #[cfg_attr(test, ts(as = "crate::typescript::Json"))]
    pub data: Value,
    /// The token estimate given at record time, or the counter's count of the
    /// event's rendered content when none was given.
    pub token_estimate: u64,
}

/// What the latest `context_compacted` event says: which tool outputs are
/// masked, which events a summary replaces, and the summary itself. Each
/// compaction event carries the whole state, so the latest one is enough.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionState {
    /// Position of the compaction event.
    pub position: usize,
    /// The level that was applied.
    pub level: CompactionLevel,
    /// Tool outcomes at or before this position are shown masked.
    pub masked_through: Option<usize>,
    /// Events at or before this position are replaced by `summary`.
    pub summarized_through: Option<usize>,
    /// The summary of the replaced events.
    pub summary: Option<String>,
}

impl CompactionState {
    /// Reads a compaction event's data; `None` when it does not name events
    /// of this log (an edited or foreign event is ignored, never trusted).
    fn parse(position: usize, data: &Value, events: &[SessionEvent]) -> Option<CompactionState> {
        let level = CompactionLevel::parse(data.get("level")?.as_str()?)?;
        let mark = |key: &str| -> Option<Option<usize>> {
            match data.get(key) {
                None | Some(Value::Null) => Some(None),
                Some(m) => {
                    let index = usize::try_from(m.get("index")?.as_u64()?).ok()?;
                    let id = m.get("event_id")?.as_str()?;
                    (events.get(index)?.event_id == id).then_some(Some(index))
                }
            }
        };
        let masked_through = mark("masked_through")?;
        let summarized_through = mark("summarized_through")?;
        let summary = match data.get("summary") {
            None | Some(Value::Null) => None,
            Some(s) => Some(s.as_str()?.to_string()),
        };
        Some(CompactionState {
            position,
            level,
            masked_through,
            summarized_through,
            summary,
        })
    }
}

/// What the log remembers about an event besides the event itself: its
/// rendered form's token count, computed once at append time, and the
/// count of the tool result message an outcome becomes in the zoned
/// layout, computed the first time a compile needs it.
#[derive(Debug, Clone)]
pub(crate) struct EventMeta {
    pub(crate) rendered_tokens: u64,
    result_tokens: Cell<Option<u64>>,
    /// Whether the event renders as a conversation turn.
    turn: bool,
    /// The history message the event renders as on its own, once a compile
    /// built it (see [`EventLog::keep_message`]).
    message: OnceCell<Shared>,
}

/// The state event ids are minted from.
struct Ids {
    last_ms: u64,
    seq: u32,
    rng: IdRng,
}

/// Append-only ordered log of [`SessionEvent`]s, with indices that keep a
/// compile's cost independent of the log's length.
pub struct EventLog {
    events: Vec<SessionEvent>,
    meta: Vec<EventMeta>,
    conversation: Vec<usize>,
    tool_outcomes: Vec<usize>,
    timeline: Vec<usize>,
    calls: CallPairs,
    approvals: Approvals,
    compaction: Option<CompactionState>,
    pinned_memories: Vec<usize>,
    last_user_input: Option<usize>,
    /// Where the model's latest reply starts, as far as the log shows it
    /// (see [`EventLog::unread_from`]).
    last_reply: Option<usize>,
    /// Whether the latest tool call or outcome indexed was an outcome (a
    /// call after it starts a new reply).
    after_outcome: bool,
    externalized: HashMap<String, ArtifactRef>,
    /// Every artifact id an event names (stored outputs, externalised
    /// outcomes, images and files): what this session may read back.
    named_artifacts: HashSet<String>,
    usage: UsageCorrection,
    /// The rendered events' tokens by kind of content, with a counter
    /// whose content margins apply ([`TokenCounter::content_margins`]).
    content: ContentTokens,
    total_tokens: u64,
    ids: RefCell<Ids>,
    /// Events recorded while the log was borrowed for reading (a compile
    /// running): stamped, counted and returned at once, indexed on the next
    /// append or [`EventLog::flush`], always in this order after `events`.
    pending: RefCell<Vec<SessionEvent>>,
    clock: Rc<dyn Clock>,
    counter: Rc<dyn TokenCounter>,
}

impl EventLog {
    /// Creates an empty log using the operating system's clock and
    /// randomness and the default token counter.
    #[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
    pub fn new() -> Self {
        EventLog::with_env(
            Rc::new(crate::clock::SystemClock),
            Rc::new(crate::tokens::DefaultTokenCounter),
            crate::clock::os_seed(),
        )
    }

    /// Creates an empty log with the given clock, token counter and id seed.
    pub fn with_env(clock: Rc<dyn Clock>, counter: Rc<dyn TokenCounter>, seed: u64) -> Self {
        EventLog {
            events: Vec::new(),
            meta: Vec::new(),
            conversation: Vec::new(),
            tool_outcomes: Vec::new(),
            timeline: Vec::new(),
            calls: CallPairs::default(),
            approvals: Approvals::default(),
            compaction: None,
            pinned_memories: Vec::new(),
            last_user_input: None,
            last_reply: None,
            after_outcome: false,
            externalized: HashMap::new(),
            named_artifacts: HashSet::new(),
            usage: UsageCorrection::bounded(counter.usage_bounds()),
            content: ContentTokens::default(),
            total_tokens: 0,
            ids: RefCell::new(Ids {
                last_ms: 0,
                seq: 0,
                rng: IdRng::new(seed),
            }),
            pending: RefCell::new(Vec::new()),
            clock,
            counter,
        }
    }

    /// Appends an event. When `token_estimate` is `None`, the estimate is the
    /// counter's count of the event's rendered content. Queued events go first.
    pub fn append(
        &mut self,
        kind: impl Into<String>,
        data: Value,
        token_estimate: Option<u64>,
    ) -> Result<&SessionEvent> {
        self.append_owned(kind.into(), data, token_estimate)
    }

    /// [`EventLog::append`] with the kind already a `String` (one body,
    /// whatever the callers' kind types).
    fn append_owned(
        &mut self,
        kind: String,
        data: Value,
        token_estimate: Option<u64>,
    ) -> Result<&SessionEvent> {
        self.flush();
        let event = self.stamp(kind, data)?;
        self.push(event, token_estimate)?;
        self.events
            .last()
            .ok_or_else(|| Error::new(ErrorCode::InvalidArgument, "the event was not appended"))
    }

    /// Records an event through a shared borrow: it is stamped and counted
    /// now, returned, and indexed by the next append or [`EventLog::flush`].
    /// Readers that want it before then use [`EventLog::all_events`].
    pub fn enqueue(
        &self,
        kind: impl Into<String>,
        data: Value,
        token_estimate: Option<u64>,
    ) -> Result<SessionEvent> {
        self.enqueue_owned(kind.into(), data, token_estimate)
    }

    /// [`EventLog::enqueue`] with the kind already a `String`.
    fn enqueue_owned(
        &self,
        kind: String,
        data: Value,
        token_estimate: Option<u64>,
    ) -> Result<SessionEvent> {
        let mut event = self.stamp(kind, data)?;
        let _ = self.counter.take_failure();
        event.token_estimate = match token_estimate {
            Some(n) => n,
            None => self.counts(&event.kind, &event.data).2,
        };
        if let Some(e) = self.counter.take_failure() {
            return Err(e);
        }
        self.pending.borrow_mut().push(event.clone());
        Ok(event)
    }

    /// Indexes every queued event, in the order they were recorded.
    pub fn flush(&mut self) {
        for event in std::mem::take(self.pending.get_mut()) {
            let estimate = event.token_estimate;
            // Counted when it was queued: should a host counter fail now, it
            // is indexed with the default counter's rendered count.
            let _ = self.index(event, Some(estimate), false, None);
        }
    }

    /// The events recorded while the log was borrowed, not yet indexed.
    pub fn pending_len(&self) -> usize {
        self.pending.borrow().len()
    }

    /// Every event, queued ones included, oldest first (borrowed when
    /// nothing is queued).
    pub fn all_events(&self) -> Cow<'_, [SessionEvent]> {
        let pending = self.pending.borrow();
        if pending.is_empty() {
            Cow::Borrowed(&self.events)
        } else {
            Cow::Owned(self.events.iter().chain(pending.iter()).cloned().collect())
        }
    }

    /// A new event of `kind` with `data` (at most [`MAX_DATA_DEPTH`] deep): its id and a timestamp that never
    /// goes below the last event's (queued ones included). Its token
    /// estimate is left at 0.
    fn stamp(&self, kind: String, data: Value) -> Result<SessionEvent> {
        if kind.is_empty() {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "event kind must be a non-empty string",
            ));
        }
        if depth(&data) > MAX_DATA_DEPTH {
            return Err(Error::new(
                ErrorCode::NotSerializable,
                format!("event data nests deeper than {MAX_DATA_DEPTH} levels"),
            ));
        }
        if crate::json_text::member(&data, "media").is_some() {
            // Images and files are named, never inlined: see crate::media.
            crate::media::parts_of(&data)?;
        }
        let now = self.clock.now_ms();
        let now = if now.is_finite() && now >= 0.0 {
            now
        } else {
            0.0
        };
        let last_ts = self
            .pending
            .borrow()
            .last()
            .or(self.events.last())
            .map_or(0.0, |e| e.timestamp);
        let timestamp = now.max(last_ts);
        let ms = timestamp as u64;
        let mut ids = self.ids.borrow_mut();
        if ms == ids.last_ms {
            ids.seq = ids.seq.wrapping_add(1) & 0xFF_FFFF;
        } else {
            ids.last_ms = ms;
            ids.seq = 0;
        }
        let random = ids.rng.next_u64() & 0xFF_FFFF;
        Ok(SessionEvent {
            event_id: event_id(ms, ids.seq, random),
            timestamp,
            kind,
            data,
            token_estimate: 0,
        })
    }

    /// The token count of an event's rendered form, its default estimate
    /// (that count, or the count of its data when it renders to nothing),
    /// and, when the counter has content margins, the kind of the rendered
    /// text (measured as it is counted; [`ContentKind::Text`] when nothing
    /// is rendered).
    fn counts<'e>(
        &self,
        kind: &str,
        data: &'e Value,
    ) -> (Option<Rendered<'e>>, u64, u64, Option<ContentKind>) {
        let rendered = render::render(kind, data);
        let margins = self.counter.content_margins();
        let (rendered_tokens, content) = match &rendered {
            Some(r) if margins => {
                let (tokens, content) = self.counter.count_with_kind(r.text());
                (tokens, Some(content))
            }
            Some(r) => (self.counter.count(r.text()), None),
            None if kind == TOOL_CALL => (render::call_tokens(data, self.counter.as_ref()), None),
            None => (0, None),
        };
        let content = content.or(margins.then_some(ContentKind::Text));
        let estimate = if rendered.is_some() {
            rendered_tokens
        } else {
            self.counter.count(&render::data_text(data))
        };
        (rendered, rendered_tokens, estimate, content)
    }

    /// Adds an event that already has its id and timestamp (used by import),
    /// updating every index; fails, adding nothing, when the counter could
    /// not count it.
    pub(crate) fn push(&mut self, event: SessionEvent, token_estimate: Option<u64>) -> Result<()> {
        self.index(event, token_estimate, true, None)
    }

    /// Adds an event, counting it and updating every index. When the
    /// counter failed, `strict` fails before anything changes; otherwise
    /// the event goes in with the counts the counter answered. `counted`:
    /// the event's rendered tokens when this counter counted them already
    /// (an event of this log placed again by a merge); its estimate is then
    /// `token_estimate`'s.
    fn index(
        &mut self,
        mut event: SessionEvent,
        token_estimate: Option<u64>,
        strict: bool,
        counted: Option<u64>,
    ) -> Result<()> {
        let index = self.events.len();
        let (rendered, rendered_tokens, estimate, content) = match counted {
            Some(tokens) => {
                let rendered = render::render(&event.kind, &event.data);
                let content = self.counter.content_margins().then(|| {
                    rendered
                        .as_ref()
                        .map_or(ContentKind::Text, |r| ContentKind::of(r.text()))
                });
                (rendered, tokens, event.token_estimate, content)
            }
            None => {
                // Only this event's counts decide.
                let _ = self.counter.take_failure();
                let counts = self.counts(&event.kind, &event.data);
                if let Some(e) = self.counter.take_failure() {
                    if strict {
                        return Err(e);
                    }
                }
                counts
            }
        };
        event.token_estimate = token_estimate.unwrap_or(estimate);
        if let Some(kind) = content {
            self.content.add(kind, rendered_tokens);
        }
        // The outcome of a decision that came second answers nothing.
        let superseded =
            approvals::decision_of(&event.data).is_some_and(|d| self.approvals.is_superseded(d));
        let turn = matches!(rendered, Some(Rendered::Message { .. }));
        match &rendered {
            _ if superseded => {}
            Some(Rendered::Message { role, .. }) => {
                self.conversation.push(index);
                self.timeline.push(index);
                if event.kind == USER_INPUT {
                    self.last_user_input = Some(index);
                }
                if role == "assistant" {
                    self.last_reply = Some(index);
                }
            }
            Some(Rendered::ToolOutcome { .. } | Rendered::Artifact(_)) => {
                self.after_outcome = true;
                self.tool_outcomes.push(index);
                self.timeline.push(index);
                if let Some(call_id) = render::call_id_of(&event.data) {
                    // Only a decided call's outcome answers a call asked about.
                    let decided = approvals::decision_of(&event.data).is_some();
                    let approvals = &self.approvals;
                    self.calls.add_outcome_passing(index, call_id, |call| {
                        !decided && approvals.request_for_call(call).is_some()
                    });
                }
            }
            None if event.kind == TOOL_CALL => {
                self.timeline.push(index);
                // The calls of one reply come together (their outcomes may
                // come between, as they finish); a call after an outcome is
                // the model's next reply.
                if self.after_outcome || self.last_reply.is_none() {
                    self.last_reply = Some(index);
                }
                self.after_outcome = false;
                self.calls
                    .add_call(index, &event.event_id, render::call_id_of(&event.data));
            }
            None => {}
        }
        if let Some(call_id) = render::call_id_of(&event.data) {
            if event.kind == APPROVAL_REQUESTED {
                let call = self.calls.unanswered_call(call_id);
                self.approvals
                    .add_request(index, &event.event_id, call_id, call);
            } else if event.kind == APPROVAL_DECIDED {
                let request = approvals::request_of(&event.data);
                self.approvals
                    .add_decision(index, &event.event_id, call_id, request);
            }
        }
        if event.kind == MEMORY_HIT
            && event.data.get("pinned") == Some(&Value::Bool(true))
            && render::pinned_memory(&event.data).is_some()
        {
            self.pinned_memories.push(index);
        }
        if event.kind == CONTEXT_COMPACTED {
            if let Some(state) = CompactionState::parse(index, &event.data, &self.events) {
                self.compaction = Some(state);
            }
        }
        if event.kind == MODEL_USAGE {
            self.usage.observe(&event.data);
            // A model call answered: what it was shown is read.
            self.last_reply = Some(index);
        }
        if event.kind == ARTIFACT_STORED {
            if let Some((source_event, aref)) = render::externalized_ref(&event.data) {
                self.externalized.insert(source_event, aref);
            }
        }
        self.named_artifacts
            .extend(render::artifacts_named(&event.kind, &event.data));
        self.total_tokens = self.total_tokens.saturating_add(event.token_estimate);
        self.meta.push(EventMeta {
            rendered_tokens,
            result_tokens: Cell::new(None),
            turn,
            message: OnceCell::new(),
        });
        self.events.push(event);
        Ok(())
    }

    /// This log with `saved` (another writer's saved log from its event
    /// `start` on, checked as an import; this log's first `start` events are
    /// the saved log's first) placed after those `start` events, then this
    /// log's own events that `saved` lacks, in their order, with the same
    /// clock, counter and id state. An own event stamped earlier than the
    /// event before it takes that event's timestamp, so the merged log's
    /// times never decrease. The events this log held keep their counts:
    /// only the saved events new to it are counted. Returns the log and how
    /// many saved events were new. Fails with [`ErrorCode::SessionBusy`]
    /// while events are queued.
    pub(crate) fn merged(
        &self,
        start: usize,
        saved: Vec<SessionEvent>,
    ) -> Result<(EventLog, usize)> {
        if self.pending_len() > 0 {
            return Err(Error::new(
                ErrorCode::SessionBusy,
                "the session is being changed and cannot be merged now",
            ));
        }
        let Some(after) = self.events.get(start..) else {
            return Err(Error::new(
                ErrorCode::StoreCorrupt,
                format!(
                    "saved events from position {start} cannot follow a session of {} events",
                    self.events.len()
                ),
            ));
        };
        // Where each of this log's events past `start` is, by id.
        let held: HashMap<&str, usize> = after
            .iter()
            .enumerate()
            .map(|(i, e)| (e.event_id.as_str(), start + i))
            .collect();
        let known: HashSet<&str> = saved.iter().map(|e| e.event_id.as_str()).collect();
        let own: Vec<usize> = (start..self.events.len())
            .filter(|&i| !known.contains(self.events[i].event_id.as_str()))
            .collect();
        drop(known);
        let placed = saved
            .iter()
            .filter(|e| !held.contains_key(e.event_id.as_str()))
            .count();
        let saved: Vec<(SessionEvent, Option<u64>)> = saved
            .into_iter()
            .map(|e| {
                let counted = held
                    .get(e.event_id.as_str())
                    .map(|&i| self.meta[i].rendered_tokens);
                (e, counted)
            })
            .collect();
        drop(held);
        let ours = |i: usize| (self.events[i].clone(), Some(self.meta[i].rendered_tokens));
        let mut log = EventLog::with_env(self.clock.clone(), self.counter.clone(), 0);
        log.ids = RefCell::new(Ids {
            last_ms: 0,
            seq: 0,
            rng: self.ids.borrow().rng.clone(),
        });
        let mut last_ts = 0.0f64;
        let events = (0..start)
            .map(ours)
            .chain(saved)
            .chain(own.into_iter().map(ours));
        for (mut event, counted) in events {
            event.timestamp = event.timestamp.max(last_ts);
            last_ts = event.timestamp;
            let estimate = event.token_estimate;
            log.index(event, Some(estimate), true, counted)?;
        }
        log.resume_ids_after_import();
        let ids = self.ids.borrow();
        let merged = log.ids.get_mut();
        if (ids.last_ms, ids.seq) > (merged.last_ms, merged.seq) {
            (merged.last_ms, merged.seq) = (ids.last_ms, ids.seq);
        }
        drop(ids);
        Ok((log, placed))
    }

    /// Continues id sequencing after imported events.
    pub(crate) fn resume_ids_after_import(&mut self) {
        if let Some(last) = self.events.last() {
            let ids = self.ids.get_mut();
            ids.last_ms = last.timestamp as u64;
            let tail = self
                .events
                .iter()
                .rev()
                .take_while(|e| e.timestamp as u64 == ids.last_ms)
                .count() as u32;
            let parsed = last
                .event_id
                .split_once('-')
                .and_then(|(_, rest)| rest.get(..6))
                .and_then(|s| u32::from_str_radix(s, 16).ok())
                .unwrap_or(0);
            ids.seq = parsed.max(tail);
        }
    }

    /// All events, oldest first.
    pub fn events(&self) -> &[SessionEvent] {
        &self.events
    }

    /// The number of events.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether the log has no events.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The events whose kind is one of `kinds`, oldest first.
    pub fn filter(&self, kinds: &[&str]) -> Vec<&SessionEvent> {
        self.events
            .iter()
            .filter(|e| kinds.contains(&e.kind.as_str()))
            .collect()
    }

    /// The sum of every event's token estimate (kept up to date on append).
    pub fn total_tokens(&self) -> u64 {
        self.total_tokens
    }

    /// The events at or after `timestamp` (milliseconds), oldest first.
    pub fn since(&self, timestamp: f64) -> &[SessionEvent] {
        let start = self.events.partition_point(|e| e.timestamp < timestamp);
        &self.events[start..]
    }

    /// The token counter this log counts with.
    pub fn counter(&self) -> &dyn TokenCounter {
        self.counter.as_ref()
    }

    /// A shared handle on the token counter this log counts with.
    pub fn counter_rc(&self) -> Rc<dyn TokenCounter> {
        self.counter.clone()
    }

    /// A shared handle on the clock this log stamps events with.
    pub fn clock_rc(&self) -> Rc<dyn Clock> {
        self.clock.clone()
    }

    /// Positions of conversation events (user and assistant turns).
    pub(crate) fn conversation(&self) -> &[usize] {
        &self.conversation
    }

    /// Positions of tool outcome events (success, error, timeout).
    pub(crate) fn tool_outcomes(&self) -> &[usize] {
        &self.tool_outcomes
    }

    /// Positions of the events a zoned context is built from: conversation
    /// turns, tool calls and tool outcomes.
    pub(crate) fn timeline(&self) -> &[usize] {
        &self.timeline
    }

    /// The position of the outcome answering the `tool_call` at
    /// `call_position` (see [`CallPairs`] for the rule).
    pub(crate) fn answer(&self, call_position: usize) -> Option<usize> {
        self.calls.answer(call_position)
    }

    /// The position of the `tool_call` the outcome at `outcome_position`
    /// answers, when one was recorded.
    pub(crate) fn call_of(&self, outcome_position: usize) -> Option<usize> {
        self.calls.call_of(outcome_position)
    }

    /// Whether the outcome at `outcome_position` is its call's latest
    /// answer (an earlier one was retried).
    pub(crate) fn is_latest_answer(&self, outcome_position: usize) -> bool {
        self.calls.is_latest_answer(outcome_position)
    }

    /// The id the call of the `tool_call` or outcome at `position` is sent
    /// under (unique in a request even when the provider reused it).
    pub(crate) fn wire_call_id(&self, position: usize) -> Option<Cow<'_, str>> {
        self.calls.wire_id(position)
    }

    /// The arguments the call at `call_position` is sent with: a standing
    /// decision's edited ones, else the call's own.
    pub(crate) fn sent_arguments(&self, call_position: usize) -> Value {
        let edited = self
            .approvals
            .standing_for_call(call_position)
            .and_then(|d| approvals::edited_arguments(&self.events[d].data));
        match edited {
            Some(args) => args.clone(),
            None => render::call_arguments(&self.events[call_position].data),
        }
    }

    /// The calls waiting for a decision (asked about, undecided, with no
    /// outcome), oldest first.
    pub fn pending_approvals(&self) -> Vec<PendingApproval> {
        self.approvals
            .pending()
            .filter(|&(_, _, call)| call.is_none_or(|c| self.calls.answer(c).is_none()))
            .map(|(position, call_id, _)| {
                let event = &self.events[position];
                PendingApproval {
                    call_id: call_id.to_string(),
                    name: render::call_name(&event.data).to_string(),
                    arguments: render::call_arguments(&event.data),
                    event_id: event.event_id.clone(),
                }
            })
            .collect()
    }

    /// The calls whose decision stands but that have no outcome yet (a run
    /// stopped, or its process died, between the decision and the call's
    /// end): each `tool_call` position with its decision's, in the
    /// decisions' order. A resumed run runs (or refuses) them.
    pub fn decided_unanswered(&self) -> Vec<(usize, usize)> {
        self.approvals
            .decided_calls()
            .into_iter()
            .filter(|&(call, _)| self.calls.answer(call).is_none())
            .collect()
    }

    /// The latest request for `call_id`: its `approval_requested` position
    /// and the position of the decision that stands, if any.
    pub fn approval_request(&self, call_id: &str) -> Option<(usize, Option<usize>)> {
        self.approvals.request(call_id)
    }

    /// Whether the `approval_decided` event `decision_id` came after
    /// another decision on its call (so it does not stand).
    pub fn is_superseded_decision(&self, decision_id: &str) -> bool {
        self.approvals.is_superseded(decision_id)
    }

    /// The `approval_requested` position about the `tool_call` at
    /// `call_position`, if it was asked about.
    pub fn approval_for_call(&self, call_position: usize) -> Option<usize> {
        self.approvals.request_for_call(call_position)
    }

    /// The latest `tool_call` recorded under `call_id` that has no outcome.
    pub fn unanswered_call(&self, call_id: &str) -> Option<usize> {
        self.calls.unanswered_call(call_id)
    }

    /// The compaction state of the latest valid `context_compacted` event.
    pub fn compaction(&self) -> Option<&CompactionState> {
        self.compaction.as_ref()
    }

    /// Positions of the `memory_hit` events pinned for the session.
    pub(crate) fn pinned_memories(&self) -> &[usize] {
        &self.pinned_memories
    }

    /// The position of the latest `user_input` event.
    pub(crate) fn last_user_input_position(&self) -> Option<usize> {
        self.last_user_input
    }

    /// The position from which tool outcomes are unread: those recorded
    /// after the model's latest reply started, which the next model call
    /// is the first to show. A reply starts at its `model_usage` (the
    /// usage a provider reported), its assistant message, or its first
    /// tool call (a call recorded after an outcome starts a new reply;
    /// calls recorded together are one reply's, whatever outcomes come
    /// between). Every outcome is unread while the model has not replied.
    pub fn unread_from(&self) -> usize {
        self.last_reply.map_or(0, |p| p + 1)
    }

    /// The latest `user_input` event.
    pub fn last_user_input(&self) -> Option<&SessionEvent> {
        self.last_user_input.map(|i| &self.events[i])
    }

    /// The token count of the rendered form of the event at `index`.
    pub(crate) fn rendered_tokens(&self, index: usize) -> u64 {
        self.meta[index].rendered_tokens
    }

    /// Whether the event at `index` renders as a conversation turn (a
    /// [`Rendered::Message`]), without rendering it again.
    pub(crate) fn is_turn(&self, index: usize) -> bool {
        self.meta.get(index).is_some_and(|m| m.turn)
    }

    /// The token count of the inline tool result message the outcome at
    /// `index` becomes, computed by `count` once and remembered (the
    /// message's text depends only on the event).
    pub(crate) fn result_tokens(&self, index: usize, count: impl FnOnce() -> u64) -> u64 {
        let cell = &self.meta[index].result_tokens;
        match cell.get() {
            Some(n) => n,
            None => {
                let n = count();
                cell.set(Some(n));
                n
            }
        }
    }

    /// The history message kept for the event at `index` (see
    /// [`EventLog::keep_message`]), when one is.
    pub(crate) fn built_message(&self, index: usize) -> Option<Shared> {
        self.meta.get(index)?.message.get().map(Rc::clone)
    }

    /// Keeps `message` as what the event at `index` renders as on its own
    /// (a turn, or an inline tool result, without media or reasoning to
    /// send back), when none is kept yet, and returns it shared: every
    /// later compile that selects the event shares it (see
    /// [`EventLog::built_message`]). An event does not change once
    /// recorded; what else a rendering depends on (a tool result's call, a
    /// masking, an externalisation) the compile checks before sharing.
    pub(crate) fn keep_message(&self, index: usize, message: HistoryMessage) -> Shared {
        let message = Rc::new(message);
        if let Some(meta) = self.meta.get(index) {
            if meta.message.get().is_none() {
                let _ = meta.message.set(Rc::clone(&message));
            }
        }
        message
    }

    /// The correction between this log's token counts and the provider's,
    /// from its `model_usage` events.
    pub fn usage_correction(&self) -> UsageCorrection {
        self.usage
    }

    /// The rendered events' tokens by kind of content (empty unless the
    /// counter's content margins apply).
    pub fn content_tokens(&self) -> ContentTokens {
        self.content
    }

    /// The artifact that the tool outcome `event_id` was externalised to.
    pub fn externalized(&self, event_id: &str) -> Option<&ArtifactRef> {
        self.externalized.get(event_id)
    }

    /// Whether an event of this log names the artifact `artifact_id` (an
    /// `artifact_stored` record, an outcome externalised to it, an image or
    /// file part): the artifacts a session may read back from a store that
    /// other sessions share. Which session stored the bytes first does not
    /// decide: content-addressed stores keep one copy for all.
    pub fn names_artifact(&self, artifact_id: &str) -> bool {
        self.named_artifacts.contains(artifact_id)
    }
}

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
impl Default for EventLog {
    fn default() -> Self {
        EventLog::new()
    }
}

impl std::fmt::Debug for EventLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventLog")
            .field("events", &self.events)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn event_ids_are_written_as_the_format_says() {
        for (ms, seq, random) in [
            (0, 0, 0),
            (0x1234_5678_9abc, 0xfe_dcba, 0x0f_0f0f),
            (u64::MAX >> 16, 0xff_ffff, 0xff_ffff),
        ] {
            assert_eq!(
                super::event_id(ms, seq, random),
                format!("{ms:012x}-{seq:06x}{random:06x}")
            );
        }
    }
}
