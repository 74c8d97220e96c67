//! History selection for the zoned layout: pinned first turns, then the
//! newest items after the last compaction that fit, with tool exchanges
//! paired. The walk starts at the newest event and stops at the budget, so
//! its cost follows what is selected, not the session's length.

use std::rc::Rc;

use crate::compiler::exchanges::{artifact_content, priced_media, ExchangeBuilder};
use crate::compiler::omissions::list_omitted;
use crate::compiler::processor::SessionWrites;
use crate::error::Result;
use crate::json_text::member;
use crate::media::cost::MediaPricing;
use crate::session::render::{render, Rendered};
use crate::session::{EventLog, Session, TOOL_CALL};
use crate::working_context::{Section, WorkingContext};
use crate::zones::Zone;

/// The cost at which an inline tool output is selected at most, for a
/// budget: a sixteenth of it, at least 64 tokens. An externaliser later in
/// the pipeline shrinks larger outputs to a handle and summary, and the
/// final fit removes what still does not fit; the walk still ends within
/// the budget's worth of items.
pub(crate) fn selection_cost_cap(budget: u64) -> u64 {
    (budget / 16).max(64)
}

/// The first event position `keep_last` allows. The window start moves in
/// steps of `ceil(keep_last / 4)` turns, so the prompt prefix stays the same
/// between steps; between `keep_last - step + 1` and `keep_last` turns are kept.
fn keep_last_floor(conversation: &[usize], keep_last: usize, len: usize) -> usize {
    let c = conversation.len();
    if keep_last == 0 {
        return len;
    }
    if keep_last == usize::MAX || c <= keep_last {
        return 0;
    }
    let step = keep_last.div_ceil(4);
    let aligned = (c - keep_last).div_ceil(step) * step;
    conversation.get(aligned).copied().unwrap_or(len)
}

/// The tokens the event at `position` costs in the context (an estimate;
/// inline tool outputs at most `cap`).
fn item_cost(
    log: &EventLog,
    position: usize,
    masked: bool,
    cap: u64,
    writes: &SessionWrites,
    pricing: &MediaPricing,
) -> u64 {
    let event = &log.events()[position];
    let media: u64 = if masked || member(&event.data, "media").is_none() {
        0
    } else {
        priced_media(&event.data, pricing)
            .iter()
            .filter_map(|p| p.tokens)
            .sum()
    };
    media + text_cost(log, position, masked, cap, writes)
}

/// [`item_cost`] of the event's text.
fn text_cost(
    log: &EventLog,
    position: usize,
    masked: bool,
    cap: u64,
    writes: &SessionWrites,
) -> u64 {
    if log.is_turn(position) {
        return log.rendered_tokens(position);
    }
    let event = &log.events()[position];
    if event.kind == TOOL_CALL {
        return match log.answer(position) {
            Some(_) => log.rendered_tokens(position),
            None => 0,
        };
    }
    let counter = log.counter();
    match render(&event.kind, &event.data) {
        Some(Rendered::Message { .. }) => log.rendered_tokens(position),
        Some(Rendered::Artifact(r)) => counter.count(&artifact_content(&r)) + 12,
        Some(Rendered::ToolOutcome { .. }) => {
            let known = log
                .externalized(&event.event_id)
                .cloned()
                .or_else(|| writes.externalized(&event.event_id));
            match known {
                Some(r) => counter.count(&artifact_content(&r)) + 12,
                None if masked => 80,
                None => log.rendered_tokens(position).min(cap) + 12,
            }
        }
        None => 0,
    }
}

/// Selects the zoned history of `session` into `ctx`.
pub(crate) fn select(
    keep_first: usize,
    keep_last: usize,
    session: &Session,
    mut ctx: WorkingContext,
    budget: u64,
    writes: &SessionWrites,
) -> Result<WorkingContext> {
    let log = session.event_log();
    let counter = log.counter();
    let overhead = counter.message_overhead();
    let events = log.events();
    let state = log.compaction();
    let boundary = state.and_then(|s| s.summarized_through);
    let masked_through = state.and_then(|s| s.masked_through);
    if ctx.summary.is_none() {
        ctx.summary = state.and_then(|s| s.summary.clone());
    }
    let mut available = budget.saturating_sub(ctx.measure(counter));

    let conv = log.conversation();
    let timeline = log.timeline();
    let recent_from = log.last_user_input_position().unwrap_or(events.len());
    // The newest user message and what follows it are RECENT, never pinned:
    // they are kept whatever they cost (the fit cuts them last).
    let pinned = &conv[..keep_first.min(conv.partition_point(|&p| p < recent_from))];
    // Pinned turns are rendered first: only those before any tool exchange
    // are pinned, so that history keeps the session's order (a first answer
    // after its tool call is never shown before the call).
    let pinned = &pinned[..pinned
        .iter()
        .zip(timeline)
        .take_while(|(p, t)| p == t)
        .count()];
    let mut pinned_kept = Vec::with_capacity(pinned.len());
    for (i, &p) in pinned.iter().enumerate() {
        let cost = log.rendered_tokens(p) + overhead;
        if cost > available {
            list_omitted(&mut ctx, log, Section::History, pinned[i..].iter().copied());
            break;
        }
        available -= cost;
        pinned_kept.push(p);
    }

    let lo = boundary
        .map_or(0, |b| b + 1)
        .max(keep_last_floor(conv, keep_last, events.len()));
    let start = timeline.partition_point(|&p| p < lo.min(recent_from));
    let mut selected = Vec::new();
    let mut walk = timeline[start..].iter().rev();
    while let Some(&p) = walk.next() {
        if pinned.binary_search(&p).is_ok() {
            continue;
        }
        let masked = masked_through.is_some_and(|m| p <= m);
        let cost = item_cost(
            log,
            p,
            masked,
            selection_cost_cap(budget),
            writes,
            &ctx.media_pricing,
        ) + overhead;
        if p >= recent_from {
            // The newest user message and what follows it are always kept.
            available = available.saturating_sub(cost);
            selected.push(p);
            continue;
        }
        if p < lo {
            break;
        }
        if cost > available {
            // What the budget leaves out of the window is listed.
            let rest = walk.clone().copied().take_while(|&q| q >= lo);
            let omitted = std::iter::once(p)
                .chain(rest)
                .filter(|q| pinned.binary_search(q).is_err());
            list_omitted(&mut ctx, log, Section::History, omitted);
            break;
        }
        available -= cost;
        selected.push(p);
    }
    selected.reverse();

    let pricing = ctx.media_pricing.clone();
    let mut builder = ExchangeBuilder::new(log, writes, masked_through, &pricing);
    for &p in &pinned_kept {
        builder.message(p);
    }
    builder.outcome_seen();
    for &p in &selected {
        if log.is_turn(p) {
            builder.message(p);
            continue;
        }
        let event = &events[p];
        if event.kind == TOOL_CALL {
            builder.tool_call(p);
            continue;
        }
        match render(&event.kind, &event.data) {
            // Turns were added above.
            Some(Rendered::Message { .. }) | None => {}
            Some(_) => {
                let call_selected = log
                    .call_of(p)
                    .is_some_and(|c| selected.binary_search(&c).is_ok());
                // An earlier outcome of a retried call is left to its latest.
                let latest = log.is_latest_answer(p);
                if !call_selected && latest {
                    builder.orphan_outcome(p);
                }
                builder.outcome_seen();
            }
        }
    }
    let mut history = builder.finish();
    for m in history.iter_mut().take(pinned_kept.len()) {
        Rc::make_mut(m).zone = Some(Zone::Persistent);
    }
    // Measured by the caller (the compile does after each processor).
    if ctx.history.is_empty() {
        ctx.history = history;
    } else {
        ctx.history.extend(history);
    }
    Ok(ctx)
}

#[cfg(test)]
mod tests {
    use super::keep_last_floor;

    #[test]
    fn the_window_start_moves_in_steps() {
        let conv: Vec<usize> = (0..100).map(|i| i * 2).collect();
        assert_eq!(keep_last_floor(&conv[..10], 20, 20), 0);
        assert_eq!(keep_last_floor(&conv, 0, 200), 200);
        assert_eq!(keep_last_floor(&conv, usize::MAX, 200), 0);
        // keep_last 20, step 5: the floor stays put for 5 turns at a time.
        let floors: Vec<usize> = (21..=31)
            .map(|c| keep_last_floor(&conv[..c], 20, 2 * c))
            .collect();
        assert_eq!(floors, vec![10, 10, 10, 10, 10, 20, 20, 20, 20, 20, 30]);
        for c in 21..=100 {
            let floor = keep_last_floor(&conv[..c], 20, 2 * c);
            let kept = conv[..c].iter().filter(|&&p| p >= floor).count();
            assert!((16..=20).contains(&kept), "{c}: {kept}");
        }
    }
}
