//! What a compiled context holds and why, and what it left out: the
//! ledger, built from the context when asked for (a compile that nobody
//! asks about pays nothing). Its parts' tokens add up to the context's exact
//! count ([`WorkingContext::exact_token_count`], a compile's `token_count`).

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::session::Session;
use crate::session::TOOL_CALL;

use crate::tokens::TokenCounter;
use crate::working_context::provider::prepare;
use crate::working_context::zoned::{self, TailPart};
use crate::working_context::{
    artifact_line, memory_line, placeholder_at, single_system_zone, tool_line, DropAction,
    HistoryMessage, Layout, WorkingContext, ARTIFACT_HEADER, CONVERSATION_START, MEMORY_HEADER,
    TOOL_HEADER,
};
use crate::zones::Zone;

/// Why a part of a context is in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub enum InclusionReason {
    /// The host's system prompt, policies and preferences.
    System,
    /// The tool definitions the request carries beside the messages.
    Tools,
    /// A turn a history selector keeps in PERSISTENT (the first turns).
    Pinned,
    /// A turn the history selection kept.
    Selected,
    /// A turn recalled from earlier in the session.
    Recalled,
    /// The compaction summary of earlier turns.
    Summary,
    /// A tool output replaced by its summary by light compaction.
    Masked,
    /// A tool output shown as its artifact's handle and summary.
    Externalised,
    /// Memories: pinned ones (PERSISTENT) and per-turn hits.
    Memory,
    /// The goal (PERSISTENT, and restated last).
    Goal,
    /// The host's state digest (PERSISTENT).
    State,
    /// The task state (RECENT).
    Task,
    /// Tool results a processor added (not turns of the history).
    ToolResult,
    /// The `[conversation start]` message before a conversation that would
    /// otherwise start with the assistant.
    Placeholder,
    /// Reasoning a turn sends back to its provider.
    Reasoning,
    /// Images and files a turn carries.
    Media,
    /// The provider's own compaction, sent first in place of the turns
    /// before it (its format only).
    ProviderCompaction,
}

impl InclusionReason {
    /// Every reason, in declaration order (`ALL[r as usize] == r`).
    pub const ALL: [InclusionReason; 17] = [
        InclusionReason::System,
        InclusionReason::Tools,
        InclusionReason::Pinned,
        InclusionReason::Selected,
        InclusionReason::Recalled,
        InclusionReason::Summary,
        InclusionReason::Masked,
        InclusionReason::Externalised,
        InclusionReason::Memory,
        InclusionReason::Goal,
        InclusionReason::State,
        InclusionReason::Task,
        InclusionReason::ToolResult,
        InclusionReason::Placeholder,
        InclusionReason::Reasoning,
        InclusionReason::Media,
        InclusionReason::ProviderCompaction,
    ];
}

/// One part of a compiled context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Included {
    /// The zone it is in (the single-system layout: its system message is
    /// SYSTEM, the history from the newest user message on RECENT, the rest
    /// WORKING).
    pub zone: Zone,
    /// The session events behind it (empty when none is: the system prompt,
    /// memories, the placeholder).
    pub event_ids: Vec<String>,
    /// Why it is there.
    pub reason: InclusionReason,
    /// Its tokens, with its message's overhead when it is the message's
    /// first part.
    pub tokens: u64,
}

/// Why something is not in a compiled context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub enum ExclusionReason {
    /// Dropped or cut to fit the budget.
    Budget,
    /// Folded into the compaction summary.
    Compacted,
    /// A tool output replaced by its summary by light compaction.
    Masked,
    /// An image or file its provider would refuse, sent as its reference.
    Refused,
    /// Conversation turns the history window never reached (one entry
    /// for all of them, with their `count`).
    Window,
}

impl ExclusionReason {
    /// Every reason, in declaration order (`ALL[r as usize] == r`).
    pub const ALL: [ExclusionReason; 5] = [
        ExclusionReason::Budget,
        ExclusionReason::Compacted,
        ExclusionReason::Masked,
        ExclusionReason::Refused,
        ExclusionReason::Window,
    ];
}

/// Something a compile left out, or cut.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Excluded {
    /// The session events it came from (empty when unknown).
    pub event_ids: Vec<String>,
    /// Why it is not there.
    pub reason: ExclusionReason,
    /// The tokens it would have cost (for a cut: what the cut removed;
    /// for `window`, the events' recorded estimates).
    pub tokens: u64,
    /// How many events the `window` entry, or the `compacted` entry of a
    /// summary carried over from an earlier compile, stands for (absent
    /// elsewhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub count: Option<u64>,
}

/// What a compiled context holds and why, and what it left out.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Ledger {
    /// Every part of the context, in the order of its messages; their
    /// tokens add up to the context's exact count.
    pub included: Vec<Included>,
    /// What the compile recorded leaving out (its `dropped` items, as
    /// capped there).
    pub excluded: Vec<Excluded>,
}

/// `total` divided among parts: each part after the first gets its
/// `weights` entry while the total lasts, the first what is left (its
/// message's overhead, and the text joining the parts). Sums to `total`.
fn apportion(total: u64, weights: &[u64]) -> Vec<u64> {
    let mut shares = vec![0; weights.len()];
    let mut left = total;
    for (share, weight) in shares.iter_mut().zip(weights).skip(1) {
        *share = (*weight).min(left);
        left -= *share;
    }
    if let Some(first) = shares.first_mut() {
        *first = left;
    }
    shares
}

/// The ledger in columns, as a binding hands it over without building a
/// list of ids per part: every event id the ledger names is borrowed from
/// the context or its session, and each entry's events are a range of
/// [`LedgerColumns::refs`] (indices into [`LedgerColumns::ids`]), so a list
/// named twice (the turns a summary stands for: its part and its
/// `compacted` entry; a message's text, reasoning and media parts) is
/// written once. [`LedgerColumns::to_ledger`] is the [`Ledger`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LedgerColumns<'a> {
    /// The event ids named, in the order they were first named.
    pub ids: Vec<&'a str>,
    /// Indices into [`LedgerColumns::ids`]: an entry's events are
    /// `refs[entry.events]`.
    pub refs: Vec<usize>,
    /// Every part of the context, as [`Ledger::included`].
    pub included: Vec<IncludedRow>,
    /// What the compile left out, as [`Ledger::excluded`].
    pub excluded: Vec<ExcludedRow>,
}

/// An [`Included`] part with its events as a range of [`LedgerColumns::refs`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncludedRow {
    /// [`Included::zone`].
    pub zone: Zone,
    /// [`Included::reason`].
    pub reason: InclusionReason,
    /// [`Included::tokens`].
    pub tokens: u64,
    /// Its events: a range of [`LedgerColumns::refs`].
    pub events: Range<usize>,
}

/// An [`Excluded`] entry with its events as a range of [`LedgerColumns::refs`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExcludedRow {
    /// [`Excluded::reason`].
    pub reason: ExclusionReason,
    /// [`Excluded::tokens`].
    pub tokens: u64,
    /// [`Excluded::count`].
    pub count: Option<u64>,
    /// Its events: a range of [`LedgerColumns::refs`].
    pub events: Range<usize>,
}

impl<'a> LedgerColumns<'a> {
    /// Names `ids` as one entry's events; their range of `refs`.
    fn name(&mut self, ids: impl IntoIterator<Item = &'a str>) -> Range<usize> {
        let start = self.refs.len();
        for id in ids {
            self.refs.push(self.ids.len());
            self.ids.push(id);
        }
        start..self.refs.len()
    }

    /// The event ids of an entry's `events`.
    pub fn event_ids(&self, events: &Range<usize>) -> impl Iterator<Item = &'a str> + '_ {
        self.refs
            .get(events.clone())
            .unwrap_or_default()
            .iter()
            .filter_map(|&r| self.ids.get(r).copied())
    }

    /// The ledger these columns hold.
    pub fn to_ledger(&self) -> Ledger {
        let ids = |events: &Range<usize>| self.event_ids(events).map(str::to_string).collect();
        Ledger {
            included: self
                .included
                .iter()
                .map(|row| Included {
                    zone: row.zone,
                    event_ids: ids(&row.events),
                    reason: row.reason,
                    tokens: row.tokens,
                })
                .collect(),
            excluded: self
                .excluded
                .iter()
                .map(|row| Excluded {
                    event_ids: ids(&row.events),
                    reason: row.reason,
                    tokens: row.tokens,
                    count: row.count,
                })
                .collect(),
        }
    }
}

/// Builds the ledger's list of parts.
struct Parts<'a, 'c> {
    counter: &'c dyn TokenCounter,
    columns: LedgerColumns<'a>,
}

impl<'a> Parts<'a, '_> {
    /// One message made of `parts` (zone, reason, events, tokens alone),
    /// costing `total` in all.
    fn message(&mut self, total: u64, parts: Vec<(Zone, InclusionReason, Range<usize>, u64)>) {
        let weights: Vec<u64> = parts.iter().map(|p| p.3).collect();
        for ((zone, reason, events, _), tokens) in parts.into_iter().zip(apportion(total, &weights))
        {
            self.columns.included.push(IncludedRow {
                zone,
                reason,
                tokens,
                events,
            });
        }
    }

    /// No events.
    fn none(&self) -> Range<usize> {
        let at = self.columns.refs.len();
        at..at
    }

    /// Names the events of items (those that have one).
    fn name(&mut self, ids: impl Iterator<Item = Option<&'a String>>) -> Range<usize> {
        self.columns.name(ids.flatten().map(String::as_str))
    }

    /// A history message in `zone`: its text (why it is there), and its
    /// reasoning and media as parts of their own.
    fn history(&mut self, h: &'a HistoryMessage, zone: Zone) {
        let Some(m) = prepare(h) else { return };
        let overhead = self.counter.message_overhead();
        let total = m
            .tokens
            .unwrap_or_else(|| zoned::message_tokens(&m, self.counter))
            + overhead;
        // An assistant message of calls names their `tool_call` events.
        let ids = self.name(
            h.event_id
                .iter()
                .map(Some)
                .chain(h.tool_calls.iter().map(|c| c.event_id.as_ref())),
        );
        let reason = if h.masked {
            InclusionReason::Masked
        } else if h.artifact.is_some() {
            InclusionReason::Externalised
        } else if h.zone == Some(Zone::Persistent) {
            InclusionReason::Pinned
        } else {
            InclusionReason::Selected
        };
        let mut parts = vec![(zone, reason, ids.clone(), 0)];
        let reasoning = zoned::reasoning_tokens(m.reasoning.as_ref(), self.counter);
        if reasoning > 0 {
            parts.push((zone, InclusionReason::Reasoning, ids.clone(), reasoning));
        }
        let media = zoned::media_tokens(&m);
        if media > 0 {
            parts.push((zone, InclusionReason::Media, ids, media));
        }
        self.message(total, parts);
    }

    /// The `[conversation start]` message, in `zone`.
    fn placeholder(&mut self, zone: Zone) {
        let total = self.counter.count(CONVERSATION_START) + self.counter.message_overhead();
        let none = self.none();
        self.message(total, vec![(zone, InclusionReason::Placeholder, none, 0)]);
    }
}

/// A set of event ids, hashed per read: by their last bytes (an id ends
/// with its sequence number and random digits), with seeded foldhash.
type IdSet<'a> = HashSet<IdKey<'a>, foldhash::fast::RandomState>;

/// An event id as a set member: equal when the whole ids are, hashed by at
/// most their last 12 bytes (foldhash's short path; its seed keeps crafted
/// collisions out of reach).
#[derive(PartialEq, Eq)]
struct IdKey<'a>(&'a str);

impl Hash for IdKey<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let bytes = self.0.as_bytes();
        state.write(&bytes[bytes.len().saturating_sub(12)..]);
    }
}

impl WorkingContext {
    /// What this context holds and why, and what it left out, with each
    /// part's tokens under `counter` (the compile's): they add up to
    /// [`WorkingContext::exact_token_count`].
    pub fn ledger(&self, counter: &dyn TokenCounter) -> Ledger {
        self.ledger_columns(counter).to_ledger()
    }

    /// [`WorkingContext::ledger`] in columns.
    pub fn ledger_columns<'a>(&'a self, counter: &dyn TokenCounter) -> LedgerColumns<'a> {
        let mut parts = Parts {
            counter,
            columns: LedgerColumns::default(),
        };
        match self.layout {
            Layout::Zoned => self.zoned_parts(&mut parts),
            Layout::SingleSystem => self.single_system_parts(&mut parts),
        }
        if let Some(c) = &self.provider_compaction {
            // First in the conversation: after the leading system parts.
            let at = parts
                .columns
                .included
                .iter()
                .position(|p| matches!(p.zone, Zone::Working | Zone::Recent))
                .unwrap_or(parts.columns.included.len());
            let events = parts.columns.name([c.event_id.as_str()]);
            parts.columns.included.insert(
                at,
                IncludedRow {
                    zone: Zone::Working,
                    reason: InclusionReason::ProviderCompaction,
                    tokens: c.tokens,
                    events,
                },
            );
        }
        self.excluded(&mut parts.columns);
        parts.columns
    }

    fn zoned_parts<'a>(&'a self, parts: &mut Parts<'a, '_>) {
        let counter = parts.counter;
        // The texts the compile counted are remembered there.
        let memo = &self.section_tokens;
        let overhead = counter.message_overhead();
        let system = memo.count(counter, &zoned::system_zone_text(self)) + overhead;
        let none = parts.none();
        parts.message(
            system,
            vec![(Zone::System, InclusionReason::System, none.clone(), 0)],
        );
        if self.tool_tokens > 0 {
            parts.message(
                self.tool_tokens,
                vec![(Zone::System, InclusionReason::Tools, none.clone(), 0)],
            );
        }
        let persistent = zoned::persistent_zone_text(self);
        if !persistent.is_empty() {
            let goal = self.goal.as_deref().filter(|g| !g.is_empty());
            let mut sections = Vec::new();
            if goal.is_some() {
                sections.push((Zone::Persistent, InclusionReason::Goal, none.clone(), 0));
            }
            if let Some(digest) = &self.state_digest {
                let alone = crate::zones::persistent_text(None, Some(digest));
                let weight = if goal.is_some() {
                    counter.count(&alone)
                } else {
                    0
                };
                sections.push((
                    Zone::Persistent,
                    InclusionReason::State,
                    none.clone(),
                    weight,
                ));
            }
            parts.message(memo.count(counter, &persistent) + overhead, sections);
        }
        // The memory message: pinned memories (PERSISTENT) and the summary
        // (WORKING), split as the zones' usage splits it.
        let pinned = zoned::pinned_text(self);
        let summary = zoned::summary_section(self);
        let memory = zoned::memory_text(&pinned, &summary);
        if !memory.is_empty() {
            let total = memo.count(counter, &memory) + overhead;
            let none = parts.none();
            if summary.is_empty() {
                parts.message(
                    total,
                    vec![(Zone::Persistent, InclusionReason::Memory, none, 0)],
                );
            } else {
                let summarized = parts.name(
                    self.dropped
                        .iter()
                        .filter(|d| d.action == DropAction::Summarized)
                        .map(|d| d.event_id.as_ref()),
                );
                if pinned.is_empty() {
                    parts.message(
                        total,
                        vec![(Zone::Working, InclusionReason::Summary, summarized, 0)],
                    );
                } else {
                    let pinned_tokens = memo.count(counter, &pinned).min(total);
                    let none = parts.none();
                    parts.message(
                        total,
                        vec![
                            (Zone::Working, InclusionReason::Summary, summarized, 0),
                            (
                                Zone::Persistent,
                                InclusionReason::Memory,
                                none,
                                pinned_tokens,
                            ),
                        ],
                    );
                }
            }
        }
        let recent = zoned::recent_start(&self.history);
        let placeholder = placeholder_at(&self.history);
        for (i, h) in self.history.iter().enumerate() {
            let zone = zoned::history_zone(h, i, recent);
            if placeholder == Some(i) {
                parts.placeholder(zone);
            }
            parts.history(h, zone);
        }
        if placeholder == Some(self.history.len()) {
            parts.placeholder(Zone::Recent);
        }
        let sections = zoned::tail_sections(self);
        if !sections.is_empty() {
            let tail = zoned::tail_text(self);
            let total = memo.count(counter, &tail) + overhead;
            let mut tail_parts = Vec::with_capacity(sections.len());
            for (part, text) in &sections {
                let (reason, events) = match part {
                    TailPart::Recalled => (
                        InclusionReason::Recalled,
                        parts.name(self.recalled.iter().map(|r| Some(&r.event_id))),
                    ),
                    TailPart::Memory => (InclusionReason::Memory, parts.none()),
                    TailPart::Artifacts => (
                        InclusionReason::Externalised,
                        parts.name(self.artifact_refs.iter().map(|a| a.event_id.as_ref())),
                    ),
                    TailPart::ToolResults => (
                        InclusionReason::ToolResult,
                        parts.name(self.tool_results.iter().map(|t| t.event_id.as_ref())),
                    ),
                    TailPart::Task => (InclusionReason::Task, parts.none()),
                    TailPart::Goal => (InclusionReason::Goal, parts.none()),
                };
                tail_parts.push((Zone::Recent, reason, events, memo.count(counter, text)));
            }
            parts.message(total, tail_parts);
        }
    }

    fn single_system_parts<'a>(&'a self, parts: &mut Parts<'a, '_>) {
        let counter = parts.counter;
        let memo = &self.section_tokens;
        let overhead = counter.message_overhead();
        let system = memo.count(counter, &self.system_content()) + overhead;
        let none = parts.none();
        let mut sections = vec![(Zone::System, InclusionReason::System, none.clone(), 0)];
        let mut section = |reason, events: Range<usize>, header: &str, lines: Vec<String>| {
            if !lines.is_empty() {
                let tokens = counter.count(&format!("{header}\n{}", lines.join("\n")));
                sections.push((Zone::System, reason, events, tokens));
            }
        };
        section(
            InclusionReason::Memory,
            none.clone(),
            MEMORY_HEADER,
            self.memory_hits.iter().map(memory_line).collect(),
        );
        section(
            InclusionReason::Externalised,
            parts.name(self.artifact_refs.iter().map(|a| a.event_id.as_ref())),
            ARTIFACT_HEADER,
            self.artifact_refs.iter().map(artifact_line).collect(),
        );
        section(
            InclusionReason::ToolResult,
            parts.name(self.tool_results.iter().map(|t| t.event_id.as_ref())),
            TOOL_HEADER,
            self.tool_results.iter().map(tool_line).collect(),
        );
        parts.message(system, sections);
        if self.tool_tokens > 0 {
            parts.message(
                self.tool_tokens,
                vec![(Zone::System, InclusionReason::Tools, none, 0)],
            );
        }
        let recent = zoned::recent_start(&self.history);
        let zone = |i: usize| single_system_zone(i, recent);
        let placeholder = placeholder_at(&self.history);
        for (i, h) in self.history.iter().enumerate() {
            if placeholder == Some(i) {
                parts.placeholder(zone(i));
            }
            parts.history(h, zone(i));
        }
        if placeholder == Some(self.history.len()) {
            parts.placeholder(Zone::Recent);
        }
    }

    /// The compile's `dropped` items as the ledger's exclusions.
    fn excluded<'a>(&'a self, columns: &mut LedgerColumns<'a>) {
        for d in &self.dropped {
            let events = columns.name(d.event_id.as_deref());
            columns.excluded.push(ExcludedRow {
                reason: match d.action {
                    DropAction::Dropped | DropAction::Truncated => ExclusionReason::Budget,
                    DropAction::Summarized => ExclusionReason::Compacted,
                    DropAction::Masked => ExclusionReason::Masked,
                    DropAction::Refused => ExclusionReason::Refused,
                },
                tokens: d.tokens_removed,
                count: None,
                events,
            });
        }
    }

    /// [`WorkingContext::ledger`] of a context compiled from `session`, in
    /// its counter, with one `window` entry in `excluded` for the
    /// conversation events (turns, tool calls and their outcomes) among the
    /// first [`WorkingContext::events_seen`] that no part holds and no
    /// exclusion names (a call goes with its outcome; exclusions beyond
    /// `dropped`'s cap are counted there too); none when there are none,
    /// or when the log is shorter than what the compile read (not the
    /// session it was compiled from). A summary an earlier compile wrote
    /// names the turns it stands for: its part lists them and one
    /// `compacted` entry (with their `count`) excludes them, so they are
    /// not counted as outside the window.
    pub fn ledger_for(&self, session: &Session) -> Ledger {
        self.ledger_columns_for(session).to_ledger()
    }

    /// [`WorkingContext::ledger_for`] in columns: the turns a summary
    /// stands for are named once for its part and its `compacted` entry.
    pub fn ledger_columns_for<'a>(&'a self, session: &'a Session) -> LedgerColumns<'a> {
        let log = session.event_log();
        let mut columns = self.ledger_columns(log.counter());
        let Some(seen) = log.events().get(..self.events_seen) else {
            return columns;
        };
        // The provider's compaction folds every event before it.
        let provider_folds = self
            .provider_compaction
            .as_ref()
            .and_then(|c| c.position.checked_sub(1));
        let folded_through = self.carried_summary_through(session).max(provider_folds);
        let named: IdSet<'a> = columns.ids.iter().map(|id| IdKey(id)).collect();
        // Turns, tool calls and outcomes, in order, as far as the compile read.
        let timeline = log.timeline();
        let timeline = &timeline[..timeline.partition_point(|&p| p < seen.len())];
        // A call goes where its outcome went (an exchange is folded or
        // dropped as one, named by its outcome).
        // By position: whether a part or an exclusion names the event, or
        // (a call) the outcome that answers it.
        let mut reached = vec![false; seen.len()];
        for &p in timeline {
            if named.contains(&IdKey(&seen[p].event_id)) {
                reached[p] = true;
                if seen[p].kind != TOOL_CALL {
                    if let Some(call) = log.call_of(p).and_then(|c| reached.get_mut(c)) {
                        *call = true;
                    }
                }
            }
        }
        drop(named);
        let (mut count, mut tokens) = (0u64, 0u64);
        let folded_start = columns.refs.len();
        let mut folded_tokens = 0u64;
        for &p in timeline {
            let event = &seen[p];
            if reached[p] {
                continue;
            }
            if folded_through.is_some_and(|through| p <= through) {
                columns.name([event.event_id.as_str()]);
                folded_tokens = folded_tokens.saturating_add(event.token_estimate);
            } else {
                count += 1;
                tokens = tokens.saturating_add(event.token_estimate);
            }
        }
        let folded = folded_start..columns.refs.len();
        if !folded.is_empty() {
            let stands_for = if provider_folds.is_some() {
                InclusionReason::ProviderCompaction
            } else {
                InclusionReason::Summary
            };
            if let Some(summary) = columns.included.iter().position(|p| p.reason == stands_for) {
                // Its own events, then the folded ones: a range of its own.
                let start = columns.refs.len();
                let own = columns.included[summary].events.clone();
                columns.refs.extend_from_within(own);
                columns.refs.extend_from_within(folded.clone());
                columns.included[summary].events = start..columns.refs.len();
            }
            columns.excluded.push(ExcludedRow {
                count: Some(folded.len() as u64),
                reason: ExclusionReason::Compacted,
                tokens: folded_tokens,
                events: folded,
            });
        }
        if count > 0 {
            let at = columns.refs.len();
            columns.excluded.push(ExcludedRow {
                reason: ExclusionReason::Window,
                tokens,
                count: Some(count),
                events: at..at,
            });
        }
        columns
    }

    /// The last event the context's summary stands for, when the summary is
    /// the one `session`'s latest compaction recorded (written by an earlier
    /// compile, or by this one).
    fn carried_summary_through(&self, session: &Session) -> Option<usize> {
        let summary = self.summary.as_deref()?;
        let state = session.event_log().compaction()?;
        (state.summary.as_deref() == Some(summary))
            .then_some(state.summarized_through)
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_is_listed_at_its_own_index() {
        // A reason added without its place in `ALL` fails to compile here
        // (no wildcard arm), or fails the index check.
        let listed = |r: InclusionReason| match r {
            InclusionReason::System
            | InclusionReason::Tools
            | InclusionReason::Pinned
            | InclusionReason::Selected
            | InclusionReason::Recalled
            | InclusionReason::Summary
            | InclusionReason::Masked
            | InclusionReason::Externalised
            | InclusionReason::Memory
            | InclusionReason::Goal
            | InclusionReason::State
            | InclusionReason::Task
            | InclusionReason::ToolResult
            | InclusionReason::Placeholder
            | InclusionReason::Reasoning
            | InclusionReason::Media
            | InclusionReason::ProviderCompaction => InclusionReason::ALL[r as usize] == r,
        };
        assert!(InclusionReason::ALL.into_iter().all(listed));
        let listed = |r: ExclusionReason| match r {
            ExclusionReason::Budget
            | ExclusionReason::Compacted
            | ExclusionReason::Masked
            | ExclusionReason::Refused
            | ExclusionReason::Window => ExclusionReason::ALL[r as usize] == r,
        };
        assert!(ExclusionReason::ALL.into_iter().all(listed));
        assert!(Zone::ALL.iter().enumerate().all(|(i, z)| *z as usize == i));
    }

    #[test]
    fn apportioning_gives_the_first_part_what_is_left() {
        assert_eq!(apportion(10, &[0, 3, 4]), [3, 3, 4]);
        assert_eq!(apportion(5, &[0, 3, 4]), [0, 3, 2]);
        assert_eq!(apportion(7, &[0]), [7]);
        assert!(apportion(7, &[]).is_empty());
    }
}
