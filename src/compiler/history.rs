//! History selection: the first turns and the most recent ones that fit.

use async_trait::async_trait;

use crate::compiler::exchanges::shared_turn;
use crate::compiler::omissions::list_omitted;
use crate::compiler::processor::{Processor, SessionWrites};
use crate::compiler::zoned_selection::{self, selection_cost_cap};
use crate::error::Result;
use crate::session::render::{render, Rendered};
use crate::session::Session;
use crate::working_context::{Layout, Section, ToolResult, WorkingContext};
use context_compiler_text::order::sort_positions;

/// Selects conversation history: the first `keep_first` turns and the last
/// `keep_last`, dropping the middle, and never more than the budget left
///
///
/// Single-system layout: it also brings the session's last `keep_last` tool outcomes
/// that fit into the context: inline as tool
/// results, or as artifact references when already externalised. Zoned
/// layout: the first turns are pinned in PERSISTENT, and the newest turns
/// and tool exchanges after the last compaction follow, each call paired
/// with its result; the window start moves in steps of a quarter of
/// `keep_last` so the prompt prefix stays stable. Either way its cost grows
/// with what it selects, not with the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistorySelector {
    keep_first: usize,
    keep_last: usize,
}

impl Default for HistorySelector {
    fn default() -> Self {
        HistorySelector::new(2, 5)
    }
}

impl HistorySelector {
    /// Keeps the first `keep_first` and the last `keep_last` turns
    /// (`usize::MAX` keeps every recent turn that fits).
    pub fn new(keep_first: usize, keep_last: usize) -> Self {
        HistorySelector {
            keep_first,
            keep_last,
        }
    }

    /// How many leading turns are kept.
    pub fn keep_first(&self) -> usize {
        self.keep_first
    }

    /// How many trailing turns are kept.
    pub fn keep_last(&self) -> usize {
        self.keep_last
    }
}

#[async_trait(?Send)]
impl Processor for HistorySelector {
    fn name(&self) -> &str {
        "history_selector"
    }

    fn selects_history(&self) -> bool {
        true
    }

    async fn process(
        &self,
        session: &Session,
        mut ctx: WorkingContext,
        budget: u64,
        writes: &mut SessionWrites,
    ) -> Result<WorkingContext> {
        if ctx.layout == Layout::Zoned {
            return zoned_selection::select(
                self.keep_first,
                self.keep_last,
                session,
                ctx,
                budget,
                writes,
            );
        }
        let log = session.event_log();
        let counter = log.counter();
        let overhead = counter.message_overhead();
        let conv = log.conversation();
        let mut available = budget.saturating_sub(ctx.measure(counter));

        let pricing = ctx.media_pricing.clone();
        let message = |i: usize| shared_turn(log, i, &pricing, None);

        // The newest user message is always selected (the final fit
        // truncates it if it must); what the budget leaves out of the first
        // and last windows is listed in `dropped`.
        let newest_user = log.last_user_input_position();
        if let Some(p) = newest_user {
            available = available.saturating_sub(log.rendered_tokens(p) + overhead);
        }
        let first_n = self.keep_first.min(conv.len());
        let mut chosen = Vec::new();
        let mut omitted = Vec::new();
        let mut take = |windows: &mut dyn Iterator<Item = usize>, available: &mut u64| {
            let mut full = false;
            for i in windows {
                if Some(i) == newest_user {
                    continue;
                }
                let cost = log.rendered_tokens(i) + overhead;
                if full || cost > *available {
                    full = true;
                    omitted.push(i);
                    continue;
                }
                *available -= cost;
                chosen.push(i);
            }
        };
        take(&mut conv[..first_n].iter().copied(), &mut available);
        take(
            &mut conv[first_n..].iter().rev().copied().take(self.keep_last),
            &mut available,
        );
        chosen.extend(newest_user);
        sort_positions(&mut chosen);
        ctx.history.extend(chosen.into_iter().filter_map(message));
        sort_positions(&mut omitted);
        list_omitted(&mut ctx, log, Section::History, omitted);

        // The newest outcomes that fit what is left, newest first, so the
        // walk ends at the budget whatever `keep_last` is. Inline outputs
        // count at most `selection_cost_cap`: an externaliser later in the
        // pipeline shrinks them, the final fit cuts what still does not fit.
        let mut picked = Vec::new();
        let mut outcomes = log.tool_outcomes().iter().rev().take(self.keep_last);
        for &i in outcomes.by_ref() {
            let cost = log.rendered_tokens(i).min(selection_cost_cap(budget)) + 8;
            if cost > available {
                list_omitted(
                    &mut ctx,
                    log,
                    Section::ToolResults,
                    std::iter::once(i).chain(outcomes.copied()),
                );
                break;
            }
            available -= cost;
            picked.push(i);
        }
        picked.reverse();
        for i in picked {
            let event = &log.events()[i];
            if let Some(existing) = log.externalized(&event.event_id) {
                ctx.artifact_refs.push(existing.clone());
                continue;
            }
            match render(&event.kind, &event.data) {
                Some(Rendered::ToolOutcome { tool, result }) => ctx.tool_results.push(ToolResult {
                    tool: tool.into_owned(),
                    result: result.into_owned(),
                    event_id: Some(event.event_id.clone()),
                    tokens: Some(log.rendered_tokens(i)),
                }),
                Some(Rendered::Artifact(mut r)) => {
                    r.event_id = Some(event.event_id.clone());
                    ctx.artifact_refs.push(r);
                }
                _ => {}
            }
        }
        ctx.measure(counter);
        Ok(ctx)
    }
}
