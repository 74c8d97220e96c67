//! The zoned layout's last step: make the context fit its budget, exactly,
//! keeping every tool call with its result and the newest user message.

use crate::compiler::exchanges::artifact_content;
use crate::error::{Error, ErrorCode, Result};
use crate::tokens::{truncate_middle_to_tokens, truncate_to_tokens, TokenCounter};
use crate::tools::look_back::{is_look_back, READ_ARTIFACT};
use crate::working_context::{
    recent_start, working_range, DropAction, DroppedItem, HistoryMessage, RecalledTurn, Section,
    Shared, WorkingContext,
};
use std::rc::Rc;

/// A text that can be cut.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    SystemPrompt,
    Summary,
    Goal,
    TaskState,
    History(usize),
}

fn text(ctx: &WorkingContext, slot: Slot) -> &str {
    match slot {
        Slot::SystemPrompt => &ctx.system_prompt,
        Slot::Summary => ctx.summary.as_deref().unwrap_or(""),
        Slot::Goal => ctx.goal.as_deref().unwrap_or(""),
        Slot::TaskState => ctx.task_state.as_deref().unwrap_or(""),
        Slot::History(i) => &ctx.history[i].content,
    }
}

fn set_text(ctx: &mut WorkingContext, slot: Slot, value: String) {
    match slot {
        Slot::SystemPrompt => ctx.system_prompt = value,
        Slot::Summary => ctx.summary = Some(value),
        Slot::Goal => ctx.goal = Some(value),
        Slot::TaskState => ctx.task_state = Some(value),
        Slot::History(i) => {
            Rc::make_mut(&mut ctx.history[i]).content = value;
            Rc::make_mut(&mut ctx.history[i]).tokens = None;
        }
    }
}

fn section(slot: Slot) -> Section {
    match slot {
        Slot::SystemPrompt => Section::SystemPrompt,
        Slot::Summary => Section::Summary,
        Slot::Goal => Section::Goal,
        Slot::TaskState => Section::TaskState,
        Slot::History(_) => Section::History,
    }
}

/// The end of the turn starting at `start`: a message and the tool results
/// that follow it.
fn turn_end(history: &[Shared], start: usize) -> usize {
    let mut end = start + 1;
    while end < history.len() && history[end].is_tool_result() {
        end += 1;
    }
    end
}

/// The index of the recalled turn to drop first: the lowest score (a
/// neighbour before a match), the oldest among equals.
fn least_relevant(recalled: &[RecalledTurn]) -> Option<usize> {
    (0..recalled.len()).min_by(|&a, &b| {
        recalled[a]
            .score
            .total_cmp(&recalled[b].score)
            .then(recalled[a].position.cmp(&recalled[b].position))
    })
}

/// Removes the turn at `start`, recording each message.
fn drop_turn(ctx: &mut WorkingContext, start: usize, counter: &dyn TokenCounter) -> u64 {
    let end = turn_end(&ctx.history, start);
    let overhead = counter.message_overhead();
    let mut removed = 0;
    for m in ctx.history.drain(start..end).collect::<Vec<_>>() {
        let tokens = m
            .tokens
            .unwrap_or_else(|| crate::working_context::zoned_message_tokens(&m, counter))
            + overhead;
        removed += tokens;
        ctx.dropped.push(DroppedItem::new(
            Section::History,
            DropAction::Dropped,
            m.event_id.clone(),
            tokens,
        ));
    }
    removed
}

/// Takes the images and files of the first message in `range` that has
/// any out of the context (their references stay), recording it; `false`
/// when none has.
pub(crate) fn strip_first_media(ctx: &mut WorkingContext, range: std::ops::Range<usize>) -> bool {
    let Some(i) = range
        .filter(|&i| i < ctx.history.len())
        .find(|&i| !ctx.history[i].media.is_empty())
    else {
        return false;
    };
    let saved = Rc::make_mut(&mut ctx.history[i]).strip_media();
    ctx.dropped.push(DroppedItem::new(
        Section::History,
        DropAction::Masked,
        ctx.history[i].event_id.clone(),
        saved,
    ));
    true
}

/// The newest user message `m` cut to `max_tokens`: its head and tail
/// around a marker naming where the whole text is (the artifact it was
/// stored as, or its session event).
pub(crate) fn cut_question(
    m: &HistoryMessage,
    counter: &dyn TokenCounter,
    max_tokens: u64,
) -> String {
    let place = match (&m.artifact, &m.event_id) {
        (Some(a), _) => format!("stored as artifact {}", a.handle),
        (None, Some(id)) => format!("in session event {id}"),
        (None, None) => "not kept".to_string(),
    };
    truncate_middle_to_tokens(counter, &m.content, max_tokens, &|bytes| {
        format!("\n\n[... {bytes} bytes cut from the middle of this message; the whole text is {place} ...]\n\n")
    })
}

/// Replaces the oldest look-back result (a `read_artifact` page or a
/// `search_history` answer) but the newest with a line saying what it was
/// and how to see it again, recording it; `false` when none is left. A
/// model paging through an output larger than the budget keeps reading.
fn mask_read_look_back(ctx: &mut WorkingContext, counter: &dyn TokenCounter) -> bool {
    let pages: Vec<usize> = ctx
        .history
        .iter()
        .enumerate()
        .filter(|(_, h)| {
            h.is_tool_result() && !h.masked && h.tool_name.as_deref().is_some_and(is_look_back)
        })
        .map(|(i, _)| i)
        .collect();
    let Some(&i) = pages.first().filter(|_| pages.len() > 1) else {
        return false;
    };
    let h = Rc::make_mut(&mut ctx.history[i]);
    let page: Option<serde_json::Value> = serde_json::from_str(&h.content).ok();
    let read = |key: &str| {
        page.as_ref()
            .and_then(|p| p.get(key))
            .map(|v| v.to_string())
            .unwrap_or_else(|| "?".into())
    };
    let line = match h.tool_name.as_deref() {
        Some(READ_ARTIFACT) => format!(
            "[page read earlier, left out to save context: {} bytes of {} from offset {}; read it again to see it]",
            read("bytes"),
            read("handle"),
            read("offset")
        ),
        _ => format!(
            "[search results read earlier, left out to save context: the query {}; search again to see them]",
            read("query")
        ),
    };
    let before = h
        .tokens
        .unwrap_or_else(|| crate::working_context::zoned_message_tokens(h, counter));
    h.content = line;
    h.masked = true;
    h.tokens = None;
    let event_id = h.event_id.clone();
    let saved = before.saturating_sub(crate::working_context::zoned_message_tokens(h, counter));
    ctx.dropped.push(DroppedItem::new(
        Section::History,
        DropAction::Masked,
        event_id,
        saved,
    ));
    true
}

/// What a `read_artifact` page that the budget cannot hold is replaced by:
/// a line saying so, with a page length that fits `tokens` (about three
/// bytes a token).
fn page_too_large(page: &str, tokens: u64) -> String {
    let bytes = serde_json::from_str::<serde_json::Value>(page)
        .ok()
        .and_then(|p| p.get("bytes").and_then(serde_json::Value::as_u64))
        .unwrap_or(page.len() as u64);
    let fits = (tokens.saturating_mul(3) / 2).clamp(1, bytes.max(1));
    format!("[this page of {bytes} bytes does not fit the context; read it again with a length of at most {fits}]")
}

/// Shows the largest unread output the attacher showed whole as its
/// artifact's handle and summary instead, recording it; `false` when none
/// is shown whole.
fn show_handle(ctx: &mut WorkingContext, counter: &dyn TokenCounter) -> bool {
    let largest = ctx
        .history
        .iter()
        .enumerate()
        .filter(|(_, h)| h.whole_of.is_some())
        .max_by_key(|(_, h)| h.content.len())
        .map(|(i, _)| i);
    let Some(i) = largest else {
        return false;
    };
    let h = Rc::make_mut(&mut ctx.history[i]);
    let Some(r) = h.whole_of.take() else {
        return false;
    };
    let before = h
        .tokens
        .unwrap_or_else(|| crate::working_context::zoned_message_tokens(h, counter));
    h.content = artifact_content(&r);
    h.artifact = Some(r);
    h.tokens = None;
    let after = crate::working_context::zoned_message_tokens(h, counter);
    ctx.dropped.push(DroppedItem::new(
        Section::History,
        DropAction::Truncated,
        h.event_id.clone(),
        before.saturating_sub(after),
    ));
    true
}

/// The tokens the unread outputs shown whole add over their handles:
/// what compaction leaves out of the utilisation it acts on (they are
/// shown as handles from the next call on).
pub(crate) fn unread_excess(ctx: &WorkingContext, counter: &dyn TokenCounter) -> u64 {
    ctx.history
        .iter()
        .filter_map(|h| {
            let r = h.whole_of.as_ref()?;
            let whole = h
                .tokens
                .unwrap_or_else(|| crate::working_context::zoned_message_tokens(h, counter));
            Some(whole.saturating_sub(counter.count(&artifact_content(r))))
        })
        .sum()
}

/// The assistant message whose calls the request's trailing tool results
/// answer (the step the model is in): providers that take reasoning back
/// want that step's (Anthropic refuses its `tool_use` without its thinking
/// while thinking is on).
fn current_step(ctx: &WorkingContext) -> Option<usize> {
    let i = ctx.history.iter().rposition(|h| !h.is_tool_result())?;
    let h = &ctx.history[i];
    (h.role == "assistant" && !h.tool_calls.is_empty() && i + 1 < ctx.history.len()).then_some(i)
}

/// Drops the reasoning of the oldest assistant message that carries any
/// (whole: signed reasoning is never cut), recording it; `false` when none
/// does. The current step's reasoning only with `current` (last of all),
/// or when it takes more than half the `budget` (it could never be sent
/// whole with its step).
fn drop_oldest_reasoning(
    ctx: &mut WorkingContext,
    counter: &dyn TokenCounter,
    budget: u64,
    current: bool,
) -> bool {
    let keep = current_step(ctx).filter(|&i| {
        !current
            && crate::working_context::reasoning_tokens(ctx.history[i].reasoning.as_ref(), counter)
                <= budget / 2
    });
    let Some(i) = ctx
        .history
        .iter()
        .enumerate()
        .position(|(i, h)| h.reasoning.is_some() && Some(i) != keep)
    else {
        return false;
    };
    let m = Rc::make_mut(&mut ctx.history[i]);
    let saved = crate::working_context::reasoning_tokens(m.reasoning.as_ref(), counter);
    m.reasoning = None;
    m.tokens = None;
    ctx.dropped.push(DroppedItem::new(
        Section::Reasoning,
        DropAction::Dropped,
        m.event_id.clone(),
        saved,
    ));
    true
}

/// Makes the zoned `ctx` fit `budget` under `counter` and sets its exact
/// token count and zone usage.
///
/// In order: drops the reasoning turns would send back (whole, the oldest
/// step's first; the current step's only when nothing else is left); takes out WORKING's images and
/// files (their references stay), then drops the oldest WORKING turns (a
/// call always with its results); drops per-turn tool results, artifact
/// references and memory hits; replaces the look-back results read before
/// the newest one by a line each; shows unread outputs shown whole as their
/// handles instead; drops pinned turns; takes out the other
/// images and files; then cuts the newest user message down to half the
/// budget (its head and tail stay), then truncates the largest text but
/// the newest user message; when no other text is left, drops the RECENT
/// turns after the newest user message, oldest first, then cuts the newest
/// user message, then drops what is left: the question goes only when
/// nothing else is left. Every change is recorded in `ctx.dropped`. Fails
/// with [`ErrorCode::BudgetTooSmall`] only when the SYSTEM zone's structure
/// (policies, tools, preferences) and the state digest alone do not fit.
pub(crate) fn fit_zoned(
    mut ctx: WorkingContext,
    budget: u64,
    counter: &dyn TokenCounter,
) -> Result<WorkingContext> {
    ctx.budget = budget;
    loop {
        let usage = ctx.measure_zones(counter);
        let exact = usage.total();
        if exact <= budget {
            ctx.zone_usage = usage;
            return Ok(ctx);
        }
        let mut over = exact - budget;
        let std::ops::Range {
            start: pinned,
            end: recent,
        } = working_range(&ctx.history);

        // 0. Reasoning: the first thing to go.
        if drop_oldest_reasoning(&mut ctx, counter, budget, false) {
            continue;
        }
        // 1. The images and files of WORKING, oldest first, then its
        // oldest turns.
        if strip_first_media(&mut ctx, pinned..recent) {
            continue;
        }
        if pinned < recent {
            while over > 0 && pinned < recent_start(&ctx.history).max(pinned) {
                over = over.saturating_sub(drop_turn(&mut ctx, pinned, counter));
            }
            continue;
        }
        // 2. Per-turn extras: tool results and artifact references a
        // processor added, oldest first, then recalled turns and memory
        // hits, least relevant first, then pinned memories, newest first.
        let extra = if !ctx.tool_results.is_empty() {
            Some((Section::ToolResults, ctx.tool_results.remove(0).event_id))
        } else if !ctx.artifact_refs.is_empty() {
            Some((Section::ArtifactRefs, ctx.artifact_refs.remove(0).event_id))
        } else if let Some(i) = least_relevant(&ctx.recalled) {
            Some((Section::Recalled, Some(ctx.recalled.remove(i).event_id)))
        } else if let Some(_hit) = ctx.memory_hits.pop() {
            Some((Section::MemoryHits, None))
        } else {
            ctx.pinned_memories
                .pop()
                .map(|_| (Section::MemoryHits, None))
        };
        if let Some((section, event_id)) = extra {
            let after = ctx.measure(counter);
            ctx.dropped.push(DroppedItem::new(
                section,
                DropAction::Dropped,
                event_id,
                exact.saturating_sub(after),
            ));
            continue;
        }
        // 2b. Look-back results the model read before its newest one
        // (pages of a stored output, searches): a line saying what they
        // were, the oldest first.
        if mask_read_look_back(&mut ctx, counter) {
            continue;
        }
        // 2c. Unread outputs shown whole: their handle and summary instead,
        // the largest first.
        if show_handle(&mut ctx, counter) {
            continue;
        }
        // 3. Pinned turns, newest first (never the newest user message).
        let newest_user = ctx.history.iter().rposition(|h| h.role == "user");
        if pinned > 0 && newest_user != Some(pinned - 1) {
            drop_turn(&mut ctx, pinned - 1, counter);
            continue;
        }
        // 4. The images and files left (pinned turns', then RECENT's,
        // oldest first: the question's last).
        let all = 0..ctx.history.len();
        if strip_first_media(&mut ctx, all) {
            continue;
        }
        // 5. Truncate the largest text, the newest user message last.
        let mut slots = vec![
            Slot::SystemPrompt,
            Slot::Summary,
            Slot::Goal,
            Slot::TaskState,
        ];
        slots.extend((0..ctx.history.len()).map(Slot::History));
        // Only a text that is not empty can be cut (a counter may count
        // tokens for the empty text: a BOS token).
        let size = |ctx: &WorkingContext, s: Slot| {
            let t = text(ctx, s);
            (!t.is_empty()).then(|| (counter.count(t), s))
        };
        // The question first, while it holds more than half the budget:
        // the instructions around it are small and matter.
        let question = newest_user
            .and_then(|u| size(&ctx, Slot::History(u)))
            .filter(|(t, _)| *t > budget / 2);
        let others = slots
            .iter()
            .copied()
            .filter(|&s| Some(s) != newest_user.map(Slot::History))
            .filter_map(|s| size(&ctx, s))
            .max_by_key(|(t, _)| *t);
        // No other text is left: the turns after the newest user message
        // go, oldest first, before the question is cut any further.
        if question.is_none() && others.is_none() {
            if let Some(u) = newest_user.filter(|u| u + 1 < ctx.history.len()) {
                drop_turn(&mut ctx, u + 1, counter);
                continue;
            }
        }
        let largest = question
            .or(others)
            .or_else(|| newest_user.and_then(|u| size(&ctx, Slot::History(u))));
        let Some((tokens, slot)) = largest else {
            // Only structure is left: the current step's reasoning, then
            // any turn (the empty newest user message last).
            if drop_oldest_reasoning(&mut ctx, counter, budget, true) {
                continue;
            }
            if let Some(last) = ctx.history.len().checked_sub(1) {
                let start = (0..=last)
                    .rev()
                    .find(|&i| !ctx.history[i].is_tool_result())
                    .unwrap_or(0);
                drop_turn(&mut ctx, start, counter);
                continue;
            }
            return Err(Error::new(
                ErrorCode::BudgetTooSmall,
                format!(
                    "a budget of {budget} tokens cannot hold the context's fixed parts ({exact} tokens)"
                ),
            ));
        };
        let event_id = match slot {
            Slot::History(i) => ctx.history[i].event_id.clone(),
            _ => None,
        };
        // The goal appears twice; cut it by half the excess.
        let cut_by = if slot == Slot::Goal {
            over.div_ceil(2)
        } else {
            over
        };
        let target = match question {
            Some(_) => tokens.saturating_sub(cut_by).max(budget / 2),
            None => tokens.saturating_sub(cut_by),
        };
        let mut cut = match slot {
            // The question keeps its head and its tail, and says where the
            // whole of it is.
            Slot::History(i) if Some(i) == newest_user => {
                cut_question(&ctx.history[i], counter, target)
            }
            // A page cut short would lose where the next one starts: the
            // model is told to read it in smaller pages instead.
            Slot::History(i) if ctx.history[i].tool_name.as_deref() == Some(READ_ARTIFACT) => {
                page_too_large(&ctx.history[i].content, target)
            }
            _ => truncate_to_tokens(counter, text(&ctx, slot), target),
        };
        if cut.len() >= text(&ctx, slot).len() {
            // No shorter head fits (a counter that is not monotonic): the
            // text goes, so every round makes progress.
            cut = String::new();
        }
        set_text(&mut ctx, slot, cut);
        let after = ctx.measure(counter);
        ctx.dropped.push(DroppedItem::new(
            section(slot),
            DropAction::Truncated,
            event_id,
            exact.saturating_sub(after),
        ));
    }
}
