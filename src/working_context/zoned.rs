//! The zoned layout's messages and their token counts.

use std::borrow::Cow;

use serde_json::Value;

use crate::tokens::TokenCounter;
use crate::working_context::media_parts;
use crate::working_context::provider::{prepare, preparing};
use crate::working_context::{
    artifact_line, conversation_start, memory_line, placeholder_at, recalled_lines, tool_line,
    ContextPart, HistoryMessage, LayoutPart, Message, Shared, WorkingContext, CONVERSATION_START,
};
use crate::zones::{self, Zone, ZoneUsage};

/// Where the RECENT zone starts in `history`: at the newest user message
/// that is not pinned (the end when there is none).
pub(crate) fn recent_start(history: &[Shared]) -> usize {
    history
        .iter()
        .rposition(|h| h.role == "user" && h.zone != Some(Zone::Persistent))
        .unwrap_or(history.len())
}

/// Where WORKING is in a zoned history: from after the pinned turns (the
/// leading PERSISTENT ones) to the newest user message (RECENT's start).
pub(crate) fn working_range(history: &[Shared]) -> std::ops::Range<usize> {
    let pinned = history
        .iter()
        .take_while(|h| h.zone == Some(Zone::Persistent))
        .count();
    pinned..recent_start(history).max(pinned)
}

/// The text a message has in the plain `{ role, content }` form: tool calls
/// are written after the assistant's text, a tool result is labelled with
/// its call's id (the call's line names the tool).
pub(crate) fn plain_content(h: &HistoryMessage) -> Cow<'_, str> {
    if !h.media.is_empty() {
        // Images and files are named by their references in plain text.
        let mut bare = h.clone();
        let text = media_parts::text_with_references(&h.content, h.media.iter());
        bare.media.clear();
        bare.content = text;
        return Cow::Owned(plain_content(&bare).into_owned());
    }
    if let Some(id) = &h.tool_call_id {
        return Cow::Owned(format!("[tool result {id}] {}", h.content));
    }
    if h.tool_calls.is_empty() {
        return Cow::Borrowed(&h.content);
    }
    let mut out = h.content.clone();
    for call in &h.tool_calls {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!(
            "[tool call {}] {}({})",
            call.id, call.name, call.arguments
        ));
    }
    Cow::Owned(out)
}

/// The plain role of a message: tool results are `user` messages.
fn plain_role(h: &HistoryMessage) -> &str {
    if h.tool_call_id.is_some() {
        "user"
    } else {
        &h.role
    }
}

/// A message in the plain form.
pub(crate) fn plain_message(h: &HistoryMessage) -> Message {
    Message {
        role: plain_role(h).to_string(),
        content: plain_content(h).into_owned(),
    }
}

/// The counter's count of a message: its plain content, and what it sends
/// back of the provider's reasoning (see [`reasoning_tokens`]).
pub(crate) fn message_tokens(h: &HistoryMessage, counter: &dyn TokenCounter) -> u64 {
    let signatures: u64 = h
        .tool_calls
        .iter()
        .filter_map(|c| c.signature.as_deref())
        .map(|s| counter.count(s))
        .sum();
    counter.count(&plain_content(h))
        + reasoning_tokens(h.reasoning.as_ref(), counter)
        + signatures
        + media_tokens(h)
}

/// The tokens of `m` as [`prepare`] leaves it (without its message
/// overhead), or `None` when it is left out: its cached count when
/// preparing keeps it as it is, without copying it.
pub(crate) fn prepared_tokens(m: &HistoryMessage, counter: &dyn TokenCounter) -> Option<u64> {
    match preparing(m)? {
        (false, false) => Some(m.tokens.unwrap_or_else(|| message_tokens(m, counter))),
        _ => prepare(m).map(|m| m.tokens.unwrap_or_else(|| message_tokens(&m, counter))),
    }
}

/// What a message's images and files cost, as the compile priced them.
pub(crate) fn media_tokens(h: &HistoryMessage) -> u64 {
    h.media.iter().filter_map(|p| p.tokens).sum()
}

/// The counter's count of replayed reasoning (`{ format, items }`): its items
/// as the JSON sent. Signatures and encrypted content are opaque to every
/// counter, so this overcounts rather than under: the budget still holds.
pub(crate) fn reasoning_tokens(reasoning: Option<&Value>, counter: &dyn TokenCounter) -> u64 {
    match reasoning.and_then(|r| r.get("items")) {
        Some(items) => counter.count(&items.to_string()),
        None => 0,
    }
}

pub(crate) fn system_zone_text(ctx: &WorkingContext) -> String {
    let names = zones::tool_names(&ctx.tool_definitions).unwrap_or_default();
    zones::system_text(
        &ctx.system_prompt,
        &ctx.policies,
        &names,
        ctx.user_preferences.as_ref(),
    )
}

/// The PERSISTENT zone's system text: the goal and the state digest, both
/// the host's.
pub(crate) fn persistent_zone_text(ctx: &WorkingContext) -> String {
    zones::persistent_text(ctx.goal.as_deref(), ctx.state_digest.as_ref())
}

/// The pinned memories' section (PERSISTENT): empty when there are none.
pub(crate) fn pinned_text(ctx: &WorkingContext) -> String {
    if ctx.pinned_memories.is_empty() {
        return String::new();
    }
    let lines: Vec<String> = ctx.pinned_memories.iter().map(memory_line).collect();
    format!("{}\n{}", zones::PINNED_HEADING, lines.join("\n"))
}

/// The compaction summary's section (WORKING): empty when there is none.
pub(crate) fn summary_section(ctx: &WorkingContext) -> String {
    ctx.summary
        .as_deref()
        .filter(|s| !s.is_empty())
        .map(zones::summary_text)
        .unwrap_or_default()
}

/// The text of the memory message after the leading system messages: the
/// pinned memories, then the compaction summary. Both are made of what
/// users, models and tools wrote, so they go in a user message, never in
/// a system one. Empty when there is neither.
pub(crate) fn memory_text(pinned: &str, summary: &str) -> String {
    match (pinned.is_empty(), summary.is_empty()) {
        (true, _) => summary.to_string(),
        (false, true) => pinned.to_string(),
        (false, false) => format!("{pinned}\n\n{summary}"),
    }
}

/// The sections of the tail message, in the order it shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TailPart {
    /// Turns recalled from earlier in the session.
    Recalled,
    /// Per-turn memory hits.
    Memory,
    /// Artifact references a processor added.
    Artifacts,
    /// Tool results a processor added.
    ToolResults,
    /// The task state.
    Task,
    /// The goal, restated last.
    Goal,
}

/// The tail's sections (see [`tail_text`]), each with what it is.
pub(crate) fn tail_sections(ctx: &WorkingContext) -> Vec<(TailPart, String)> {
    let mut sections: Vec<(TailPart, String)> = Vec::new();
    if !ctx.recalled.is_empty() {
        let lines = recalled_lines(&ctx.recalled);
        sections.push((
            TailPart::Recalled,
            format!("{}\n{}", zones::RECALLED_HEADING, lines.join("\n")),
        ));
    }
    if !ctx.memory_hits.is_empty() {
        let lines: Vec<String> = ctx.memory_hits.iter().map(memory_line).collect();
        sections.push((
            TailPart::Memory,
            format!("## Relevant memories\n{}", lines.join("\n")),
        ));
    }
    if !ctx.artifact_refs.is_empty() {
        let lines: Vec<String> = ctx.artifact_refs.iter().map(artifact_line).collect();
        sections.push((
            TailPart::Artifacts,
            format!(
                "## Available artifacts (use handle to retrieve)\n{}",
                lines.join("\n")
            ),
        ));
    }
    if !ctx.tool_results.is_empty() {
        let lines: Vec<String> = ctx.tool_results.iter().map(tool_line).collect();
        sections.push((
            TailPart::ToolResults,
            format!("## Recent tool results\n{}", lines.join("\n")),
        ));
    }
    if let Some(task) = ctx.task_state.as_deref().filter(|t| !t.is_empty()) {
        sections.push((TailPart::Task, zones::task_text(task)));
    }
    if let Some(goal) = ctx.goal.as_deref().filter(|g| !g.is_empty()) {
        sections.push((TailPart::Goal, zones::goal_restated_text(goal)));
    }
    sections
}

/// The last message of the RECENT zone, a user message: turns recalled
/// from earlier (quoted, not instructions), per-turn memory hits, artifact
/// references and tool results a processor added, the task state, and the
/// goal restated last. Empty when there is none of these.
pub(crate) fn tail_text(ctx: &WorkingContext) -> String {
    let sections: Vec<String> = tail_sections(ctx).into_iter().map(|(_, s)| s).collect();
    sections.join("\n\n")
}

/// One of the leading system messages (SYSTEM, PERSISTENT): what the host
/// gave, nothing else.
fn system_section(zone: Zone, content: String) -> HistoryMessage {
    let mut m = HistoryMessage::new("system", content);
    m.zone = Some(zone);
    m
}

/// A user message the layout writes itself (the memory message, the tail).
fn user_part(zone: Zone, part: LayoutPart, content: String) -> HistoryMessage {
    let mut m = HistoryMessage::new("user", content);
    m.zone = Some(zone);
    m.part = Some(part);
    m
}

/// The zone of the history message at `index`.
pub(crate) fn history_zone(h: &HistoryMessage, index: usize, recent: usize) -> Zone {
    if h.zone == Some(Zone::Persistent) {
        Zone::Persistent
    } else if index >= recent {
        Zone::Recent
    } else {
        Zone::Working
    }
}

/// The zoned layout's messages, each with its zone: the host's system
/// text (SYSTEM, then PERSISTENT's goal and state digest), the memory
/// message (pinned memories and the compaction summary, as a user), the
/// conversation, and the per-turn tail (as a user, last). The conversation's
/// turns are borrowed, each beside the zone it is in (see [`ContextPart`]).
pub(crate) fn parts(ctx: &WorkingContext) -> Vec<ContextPart<'_>> {
    let mut out: Vec<ContextPart<'_>> = Vec::with_capacity(ctx.history.len() + 4);
    out.push(system_section(Zone::System, system_zone_text(ctx)).into());
    let persistent = persistent_zone_text(ctx);
    if !persistent.is_empty() {
        out.push(system_section(Zone::Persistent, persistent).into());
    }
    let summary = summary_section(ctx);
    let memory = memory_text(&pinned_text(ctx), &summary);
    if !memory.is_empty() {
        let zone = if summary.is_empty() {
            Zone::Persistent
        } else {
            Zone::Working
        };
        out.push(user_part(zone, LayoutPart::Memory, memory).into());
    }
    let recent = recent_start(&ctx.history);
    let placeholder = placeholder_at(&ctx.history);
    for (i, h) in ctx.history.iter().enumerate() {
        let zone = history_zone(h, i, recent);
        if placeholder == Some(i) {
            out.push(conversation_start(Some(zone)).into());
        }
        out.push(ContextPart::Turn(h, zone));
    }
    if placeholder == Some(ctx.history.len()) {
        out.push(conversation_start(Some(Zone::Recent)).into());
    }
    let tail = tail_text(ctx);
    if !tail.is_empty() {
        out.push(user_part(Zone::Recent, LayoutPart::Tail, tail).into());
    }
    out
}

/// Tokens per zone of [`messages`], using cached history counts.
pub(crate) fn usage(ctx: &WorkingContext, counter: &dyn TokenCounter) -> ZoneUsage {
    let overhead = counter.message_overhead();
    let memo = &ctx.section_tokens;
    let mut usage = ZoneUsage::default();
    usage.add(
        Zone::System,
        memo.count(counter, &system_zone_text(ctx)) + overhead + ctx.tool_tokens,
    );
    let persistent = persistent_zone_text(ctx);
    if !persistent.is_empty() {
        usage.add(
            Zone::Persistent,
            memo.count(counter, &persistent) + overhead,
        );
    }
    // The memory message: the pinned memories' share in PERSISTENT, the
    // rest (the summary, and the message's overhead when there is one) in
    // WORKING; the two add up to the message's own count.
    let pinned = pinned_text(ctx);
    let summary = summary_section(ctx);
    let memory = memory_text(&pinned, &summary);
    if !memory.is_empty() {
        let total = memo.count(counter, &memory) + overhead;
        let pinned_tokens = if summary.is_empty() {
            total
        } else if pinned.is_empty() {
            0
        } else {
            memo.count(counter, &pinned).min(total)
        };
        usage.add(Zone::Persistent, pinned_tokens);
        usage.add(Zone::Working, total - pinned_tokens);
    }
    let recent = recent_start(&ctx.history);
    for (i, h) in ctx.history.iter().enumerate() {
        let Some(tokens) = prepared_tokens(h, counter) else {
            continue;
        };
        usage.add(history_zone(h, i, recent), tokens + overhead);
    }
    if let Some(i) = placeholder_at(&ctx.history) {
        let zone = ctx
            .history
            .get(i)
            .map_or(Zone::Recent, |h| history_zone(h, i, recent));
        usage.add(zone, memo.count(counter, CONVERSATION_START) + overhead);
    }
    let tail = tail_text(ctx);
    if !tail.is_empty() {
        usage.add(Zone::Recent, memo.count(counter, &tail) + overhead);
    }
    if let Some(c) = &ctx.provider_compaction {
        usage.add(Zone::Working, c.tokens);
    }
    usage
}
