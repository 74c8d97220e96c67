//! Compaction. Single-system layout: merge consecutive same-role turns and trim
//! whitespace. Zoned layout: compaction with hysteresis at fixed
//! levels (see [`crate::compiler::compaction`]).

use std::rc::Rc;

use async_trait::async_trait;

use crate::compiler::compaction::{self, DEFAULT_COMPACTION_TARGET};
use crate::compiler::processor::{Processor, SessionWrites};
use crate::error::{Error, ErrorCode, Result};
use crate::llm::Llm;
use crate::session::Session;
use crate::working_context::{HistoryMessage, Layout, Shared, WorkingContext};

/// The compactor, and the zoned layout's level-based compaction.
///
/// In the single-system layout it merges consecutive messages of the same role
/// (joined by a newline) and trims surrounding whitespace; merged or trimmed
/// messages are recounted. In the zoned layout it masks old tool outputs at
/// 80% of the budget and folds the oldest turns into a summary at 90% (and
/// at 95%, all but the last two), down to `target` of the budget, and
/// records the result in the session. The summary comes from `summarizer`
/// when given, else from a deterministic built-in digest.
#[derive(Clone)]
pub struct Compactor {
    summarizer: Option<Rc<dyn Llm>>,
    target: f64,
}

impl Default for Compactor {
    fn default() -> Self {
        Compactor::new()
    }
}

impl std::fmt::Debug for Compactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compactor")
            .field("summarizer", &self.summarizer.is_some())
            .field("target", &self.target)
            .finish()
    }
}

impl Compactor {
    /// A compactor with the built-in summary and a target of half the budget.
    pub fn new() -> Self {
        Compactor {
            summarizer: None,
            target: DEFAULT_COMPACTION_TARGET,
        }
    }

    /// A compactor summarising with `summarizer` (the built-in digest when
    /// `None`) down to `target` of the budget (a fraction in `(0, 0.8)`).
    pub fn with_options(summarizer: Option<Rc<dyn Llm>>, target: f64) -> Result<Self> {
        if !(target > 0.0 && target < crate::zones::COMPACT_LIGHT) {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!(
                    "the compaction target must be a fraction above 0 and below 0.8 (got {target})"
                ),
            ));
        }
        Ok(Compactor { summarizer, target })
    }

    /// The utilisation a zoned compaction brings the context down to.
    pub fn target(&self) -> f64 {
        self.target
    }

    /// Whether summaries come from an injected model.
    pub fn has_summarizer(&self) -> bool {
        self.summarizer.is_some()
    }
}

#[async_trait(?Send)]
impl Processor for Compactor {
    fn name(&self) -> &str {
        "compactor"
    }

    async fn process(
        &self,
        session: &Session,
        mut ctx: WorkingContext,
        budget: u64,
        writes: &mut SessionWrites,
    ) -> Result<WorkingContext> {
        if ctx.layout == Layout::Zoned {
            return compaction::compact(
                self.summarizer.as_deref(),
                self.target,
                session,
                ctx,
                budget,
                writes,
            )
            .await;
        }
        if ctx.history.is_empty() {
            return Ok(ctx);
        }
        let mut merged: Vec<Shared> = Vec::with_capacity(ctx.history.len());
        for msg in std::mem::take(&mut ctx.history) {
            let trimmed = msg.content.trim();
            match merged.last_mut() {
                Some(prev) if prev.role == msg.role => {
                    let prev = Rc::make_mut(prev);
                    prev.content.push('\n');
                    prev.content.push_str(trimmed);
                    prev.tokens = None;
                }
                _ if trimmed.len() == msg.content.len() => merged.push(msg),
                _ => merged.push(Rc::new(HistoryMessage {
                    content: trimmed.to_string(),
                    tokens: None,
                    ..Rc::unwrap_or_clone(msg)
                })),
            }
        }
        ctx.history = merged;
        ctx.measure(session.event_log().counter());
        Ok(ctx)
    }
}
