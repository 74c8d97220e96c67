//! Compaction: merge consecutive same-role turns and trim whitespace.

use async_trait::async_trait;

use crate::compiler::processor::{Processor, SessionWrites};
use crate::error::Result;
use crate::session::Session;
use crate::working_context::{HistoryMessage, WorkingContext};

/// Merges consecutive messages of the same role (joined by a newline) and
/// trims surrounding whitespace; merged or trimmed messages are recounted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Compactor;

impl Compactor {
    /// A compactor.
    pub fn new() -> Self {
        Compactor
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
        _budget: u64,
        _writes: &mut SessionWrites,
    ) -> Result<WorkingContext> {
        if ctx.history.is_empty() {
            return Ok(ctx);
        }
        let mut merged: Vec<HistoryMessage> = Vec::with_capacity(ctx.history.len());
        for msg in std::mem::take(&mut ctx.history) {
            let trimmed = msg.content.trim();
            let changed = trimmed.len() != msg.content.len();
            match merged.last_mut() {
                Some(prev) if prev.role == msg.role => {
                    prev.content.push('\n');
                    prev.content.push_str(trimmed);
                    prev.tokens = None;
                }
                _ => merged.push(HistoryMessage {
                    content: trimmed.to_string(),
                    tokens: if changed { None } else { msg.tokens },
                    ..msg
                }),
            }
        }
        ctx.history = merged;
        ctx.measure(session.event_log().counter());
        Ok(ctx)
    }
}
