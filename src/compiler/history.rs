//! History selection: the first turns and the most recent ones that fit.

use async_trait::async_trait;

use crate::compiler::processor::{Processor, SessionWrites};
use crate::error::Result;
use crate::session::render::{render, Rendered};
use crate::session::Session;
use crate::working_context::{HistoryMessage, ToolResult, WorkingContext};

/// Selects conversation history: the first `keep_first` turns and the last
/// `keep_last`, dropping the middle, and never more than the budget left
/// (the seed's selector ignored the budget). It also brings the session's last
/// `keep_last` tool outcomes into the context (the seed's never reached it):
/// inline as tool results, or as artifact references when already
/// externalised. Its cost grows with what it selects, not with the session.
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

    async fn process(
        &self,
        session: &Session,
        mut ctx: WorkingContext,
        budget: u64,
        _writes: &mut SessionWrites,
    ) -> Result<WorkingContext> {
        let log = session.event_log();
        let counter = log.counter();
        let overhead = counter.message_overhead();
        let conv = log.conversation();
        let mut available = budget.saturating_sub(ctx.measure(counter));

        let message = |i: usize| -> Option<HistoryMessage> {
            let event = &log.events()[i];
            match render(&event.kind, &event.data) {
                Some(Rendered::Message { role, content }) => Some(HistoryMessage {
                    role: role.into_owned(),
                    content: content.into_owned(),
                    event_id: Some(event.event_id.clone()),
                    tokens: Some(log.rendered_tokens(i)),
                }),
                _ => None,
            }
        };

        let first_n = self.keep_first.min(conv.len());
        let mut first = Vec::new();
        for &i in &conv[..first_n] {
            let cost = log.rendered_tokens(i) + overhead;
            if cost > available {
                break;
            }
            available -= cost;
            first.extend(message(i));
        }
        let mut last = Vec::new();
        for &i in conv[first_n..].iter().rev().take(self.keep_last) {
            let cost = log.rendered_tokens(i) + overhead;
            if cost > available {
                break;
            }
            available -= cost;
            last.extend(message(i));
        }
        last.reverse();
        ctx.history.extend(first);
        ctx.history.extend(last);

        let outcomes = log.tool_outcomes();
        let start = outcomes.len().saturating_sub(self.keep_last);
        for &i in &outcomes[start..] {
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
