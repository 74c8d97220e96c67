//! Compaction of the zoned layout, with hysteresis at the compaction levels.
//!
//! At 80% of the budget (light) every tool output in WORKING is masked (its
//! summary and where it is kept stand in for it); at 90% (full), or when
//! masking alone does not bring the context down to the target, the oldest
//! turns of WORKING are replaced by a summary until it is; at 95%
//! (emergency) only the goal, the summary, the last two WORKING turns and
//! the RECENT zone stay. The target (half the budget by default) is well
//! below the trigger, so the calls after a compaction append again and the
//! prompt prefix stays the same until the next one.
//!
//! A compaction is recorded in the session as a `context_compacted` event
//! carrying the whole state (what is masked, what the summary replaces, the
//! summary's text), so later compiles reuse the same bytes and an exported
//! session compiles the same after import.

use serde_json::{json, Value};
use std::rc::Rc;

use crate::compiler::exchanges;
use crate::compiler::fit_zoned::unread_excess;
use crate::compiler::omissions::MAX_LISTED;
use crate::compiler::processor::SessionWrites;
use crate::compiler::summary::{builtin_summary, llm_prompt};
use crate::error::Result;
use crate::llm::{Llm, LlmOptions};
use crate::session::{EventLog, Session, CONTEXT_COMPACTED};
use crate::tokens::truncate_to_tokens;
use crate::working_context::{
    working_range, DropAction, DroppedItem, Section, Shared, WorkingContext,
};
use crate::zones::CompactionLevel;

/// How many WORKING turns an emergency compaction keeps.
pub const EMERGENCY_KEEP_TURNS: usize = 2;
/// The default utilisation a compaction brings the context down to.
pub const DEFAULT_COMPACTION_TARGET: f64 = 0.5;

/// The largest summary, in tokens, for a budget: a tenth of it, between 64
/// and 1,000 tokens.
pub(crate) fn summary_tokens(budget: u64) -> u64 {
    (budget / 10).clamp(64, 1_000)
}

/// The `[start, end)` ranges of the turns in `history`: a message with the
/// tool results that follow it.
fn turns(history: &[Shared]) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (i, h) in history.iter().enumerate() {
        match out.last_mut() {
            Some(last) if h.is_tool_result() => last.1 = i + 1,
            _ => out.push((i, i + 1)),
        }
    }
    out
}

fn mark(log: &EventLog, position: Option<usize>) -> Value {
    match position.and_then(|p| log.events().get(p).map(|e| (p, e))) {
        Some((p, e)) => json!({"index": p, "event_id": e.event_id}),
        None => Value::Null,
    }
}

/// The summary of the events in `(after, through]`: the LLM's when one is
/// given and answers, else the built-in digest (with the LLM's error).
async fn summarize(
    llm: Option<&dyn Llm>,
    log: &EventLog,
    after: Option<usize>,
    through: usize,
    previous: Option<&str>,
    max_tokens: u64,
) -> (String, Option<String>) {
    let counter = log.counter();
    let mut error = None;
    if let Some(llm) = llm {
        let prompt = llm_prompt(log, after, through, previous, max_tokens);
        match llm.complete(&prompt, LlmOptions { max_tokens }).await {
            Ok(text) if !text.trim().is_empty() => {
                return (truncate_to_tokens(counter, text.trim(), max_tokens), None)
            }
            Ok(_) => error = Some("the summarizer returned an empty summary".to_string()),
            Err(e) => error = Some(e.to_string()),
        }
    }
    let text = builtin_summary(log, after, through, previous, (max_tokens as usize) * 3);
    (truncate_to_tokens(counter, &text, max_tokens), error)
}

/// Compacts `ctx` when its utilisation calls for it, recording the new
/// compaction state in `writes`.
pub(crate) async fn compact(
    llm: Option<&dyn Llm>,
    target: f64,
    session: &Session,
    mut ctx: WorkingContext,
    budget: u64,
    writes: &mut SessionWrites,
) -> Result<WorkingContext> {
    let log = session.event_log();
    let counter = log.counter();
    let before = ctx.measure(counter);
    // Unread outputs shown whole are handles from the next call on: they
    // do not call for a compaction (the final fit makes room for them).
    let unread = unread_excess(&ctx, counter);
    let level =
        CompactionLevel::for_utilization(before.saturating_sub(unread) as f64 / budget as f64);
    ctx.compaction_level = level;
    if level == CompactionLevel::None {
        return Ok(ctx);
    }
    let target_tokens = (target * budget as f64) as u64;
    let state = log.compaction();
    let prev_masked = state.and_then(|s| s.masked_through);
    let prev_through = state.and_then(|s| s.summarized_through);
    let std::ops::Range {
        start: pinned,
        end: recent,
    } = working_range(&ctx.history);

    // Light: mask the tool outputs of WORKING.
    let mut masked_through = prev_masked;
    for h in &mut ctx.history[pinned..recent] {
        if h.is_tool_result() && !h.media.is_empty() {
            // Its images and files leave first; their references stay.
            let saved = Rc::make_mut(h).strip_media();
            ctx.dropped.push(DroppedItem::new(
                Section::History,
                DropAction::Masked,
                h.event_id.clone(),
                saved,
            ));
        }
        if !h.is_tool_result() || h.masked || h.artifact.is_some() {
            continue;
        }
        let Some(position) = h.position else { continue };
        if let Some(o) = exchanges::outcome(log, position, true, writes, &ctx.media_pricing) {
            if o.masked {
                let before = h.tokens.unwrap_or_else(|| counter.count(&h.content));
                let after = counter.count(&o.content);
                ctx.dropped.push(DroppedItem::new(
                    Section::History,
                    DropAction::Masked,
                    h.event_id.clone(),
                    before.saturating_sub(after),
                ));
            }
            let h = Rc::make_mut(h);
            h.content = o.content;
            h.masked = o.masked;
            h.tokens = None;
            masked_through = Some(masked_through.map_or(position, |m| m.max(position)));
        }
    }
    let mut used = ctx.measure(counter).saturating_sub(unread);

    // Full and emergency: fold the oldest WORKING turns into the summary.
    let groups = turns(&ctx.history[pinned..recent]);
    let cap = summary_tokens(budget);
    let mut fold = 0;
    if level >= CompactionLevel::Full || used > target_tokens {
        let mut remaining = used + cap;
        while fold < groups.len() && remaining > target_tokens {
            let (s, e) = groups[fold];
            let cost: u64 = ctx.history[pinned + s..pinned + e]
                .iter()
                .map(|h| h.tokens.unwrap_or(0) + counter.message_overhead())
                .sum();
            remaining = remaining.saturating_sub(cost);
            fold += 1;
        }
    }
    if level == CompactionLevel::Emergency {
        fold = fold.max(groups.len().saturating_sub(EMERGENCY_KEEP_TURNS));
    }
    // A folded question takes its whole turn along: what is kept never
    // starts with a tool exchange (or an answer) whose question is gone.
    if fold > 0 {
        while fold < groups.len() && ctx.history[pinned + groups[fold].0].role != "user" {
            fold += 1;
        }
    }
    let mut through = prev_through;
    let mut summarizer_error = None;
    let mut summarized_from = None;
    if fold > 0 {
        let end = pinned + groups[fold - 1].1;
        let last = ctx.history[pinned..end]
            .iter()
            .filter_map(|h| h.position)
            .max()
            .filter(|t| prev_through.is_none_or(|p| *t > p));
        let first = ctx.history[pinned..end]
            .iter()
            .filter_map(|h| h.position)
            .filter(|t| prev_through.is_none_or(|p| *t > p))
            .min();
        if let Some(last) = last {
            let (summary, error) =
                summarize(llm, log, prev_through, last, ctx.summary.as_deref(), cap).await;
            let overhead = counter.message_overhead();
            let folded: Vec<DroppedItem> = ctx
                .history
                .drain(pinned..end)
                .take(MAX_LISTED)
                .map(|h| {
                    let tokens = h.tokens.unwrap_or_else(|| counter.count(&h.content));
                    DroppedItem::new(
                        Section::History,
                        DropAction::Summarized,
                        h.event_id.clone(),
                        tokens + overhead,
                    )
                })
                .collect();
            ctx.dropped.extend(folded);
            ctx.summary = Some(summary);
            through = Some(last);
            summarized_from = first;
            summarizer_error = error;
            used = ctx.measure(counter).saturating_sub(unread);
        }
    }
    if masked_through == prev_masked && through == prev_through {
        return Ok(ctx);
    }
    let applied = if through != prev_through {
        level.max(CompactionLevel::Full)
    } else {
        CompactionLevel::Light
    };
    let mut data = json!({
        "level": applied.as_str(),
        "masked_through": mark(log, masked_through),
        "summarized_through": mark(log, through),
        // The first event this compaction folded (with `summarized_through`,
        // the span the new summary stands for; null when it folded none).
        "summarized_from": mark(log, summarized_from),
        "summary": ctx.summary,
        "tokens_before": before,
        "tokens_after": used,
        "budget": budget,
    });
    if let Some(e) = summarizer_error {
        data["summarizer_error"] = Value::from(e);
    }
    writes.record(CONTEXT_COMPACTED, data);
    Ok(ctx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::working_context::HistoryMessage;

    #[test]
    fn turns_keep_results_with_their_call() {
        let mut call = HistoryMessage::new("assistant", "");
        call.tool_calls.push(crate::working_context::ToolCallPart {
            id: "c".into(),
            name: "t".into(),
            arguments: json!({}),
            signature: None,
            event_id: None,
        });
        let mut result = HistoryMessage::new("tool", "x");
        result.tool_call_id = Some("c".into());
        let h: Vec<Shared> = [
            HistoryMessage::new("user", "a"),
            call,
            result.clone(),
            result,
            HistoryMessage::new("assistant", "b"),
        ]
        .map(Rc::new)
        .into();
        assert_eq!(turns(&h), vec![(0, 1), (1, 4), (4, 5)]);
        assert_eq!(summary_tokens(32_000), 1_000);
        assert_eq!(summary_tokens(100), 64);
    }
}
