//! Memory preloading: recall what is relevant to the latest user input.

use std::rc::Rc;

use async_trait::async_trait;

use crate::compiler::processor::{Processor, SessionWrites};
use crate::error::Result;
use crate::memory::MemoryStore;
use crate::session::render::{render, Rendered};
use crate::session::Session;
use crate::working_context::{MemoryHit, WorkingContext};

/// Queries a [`MemoryStore`] with the latest user input and adds the top-K
/// entries to the context, skipping entries already there and entries that
/// would not fit the budget left.
pub struct MemoryPreloader {
    memory: Rc<dyn MemoryStore>,
    top_k: usize,
}

impl MemoryPreloader {
    /// Preloads up to `top_k` memories from `memory`.
    pub fn new(memory: Rc<dyn MemoryStore>, top_k: usize) -> Self {
        MemoryPreloader { memory, top_k }
    }

    /// How many memories are recalled at most.
    pub fn top_k(&self) -> usize {
        self.top_k
    }
}

#[async_trait(?Send)]
impl Processor for MemoryPreloader {
    fn name(&self) -> &str {
        "memory_preloader"
    }

    async fn process(
        &self,
        session: &Session,
        mut ctx: WorkingContext,
        budget: u64,
        _writes: &mut SessionWrites,
    ) -> Result<WorkingContext> {
        let log = session.event_log();
        let query = match log.last_user_input().and_then(|e| render(&e.kind, &e.data)) {
            Some(Rendered::Message { content, .. }) if !content.trim().is_empty() => {
                content.into_owned()
            }
            _ => return Ok(ctx),
        };
        let counter = log.counter();
        let entries = self.memory.recall(&query, self.top_k).await?;
        let mut available = budget.saturating_sub(ctx.measure(counter));
        for e in entries.into_iter().take(self.top_k) {
            if ctx.memory_hits.iter().any(|h| h.key == e.key) {
                continue;
            }
            let tokens = counter.count(&e.content);
            let cost = tokens + counter.count(&e.key) + 3;
            if cost > available {
                continue;
            }
            available -= cost;
            ctx.memory_hits.push(MemoryHit {
                key: e.key,
                content: e.content,
                category: e.category,
                tokens: Some(tokens),
            });
        }
        ctx.measure(counter);
        Ok(ctx)
    }
}
