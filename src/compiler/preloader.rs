//! Memory preloading: recall what is relevant to the latest user input.

use std::rc::Rc;

use async_trait::async_trait;

use crate::compiler::omissions::list_omitted_memory;
use crate::compiler::processor::{Processor, SessionWrites};
use crate::error::Result;
use crate::memory::MemoryStore;
use crate::session::render::{pinned_memory, render, Rendered};
use crate::session::{Session, MEMORY_HIT};
use crate::working_context::{Layout, MemoryHit, WorkingContext};
use serde_json::json;

/// Queries a [`MemoryStore`] with the latest user input and adds the top-K
/// entries to the context, skipping entries already there and entries that
/// would not fit the budget left.
///
/// Pinning (zoned layout): the memories already pinned in the session come
/// first, in the PERSISTENT zone; newly recalled ones are pinned too, each
/// recorded once as a `memory_hit` event with `"pinned": true`, so the
/// PERSISTENT zone changes only when a new memory is pinned. Without pinning,
/// recalled memories are per-turn and sit at the end of the RECENT zone.
pub struct MemoryPreloader {
    memory: Rc<dyn MemoryStore>,
    top_k: usize,
    pin: bool,
}

/// Memories recalled at most by default.
pub const DEFAULT_MEMORY_TOP_K: usize = 5;

impl MemoryPreloader {
    /// Preloads up to `top_k` memories from `memory`.
    pub fn new(memory: Rc<dyn MemoryStore>, top_k: usize) -> Self {
        MemoryPreloader {
            memory,
            top_k,
            pin: false,
        }
    }

    /// Preloads up to `top_k` memories from `memory`, pinned for the session
    /// in the zoned layout.
    pub fn pinned(memory: Rc<dyn MemoryStore>, top_k: usize) -> Self {
        MemoryPreloader {
            memory,
            top_k,
            pin: true,
        }
    }

    /// Whether recalled memories are pinned for the session.
    pub fn pins(&self) -> bool {
        self.pin
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
        writes: &mut SessionWrites,
    ) -> Result<WorkingContext> {
        let log = session.event_log();
        let pin = self.pin && ctx.layout == Layout::Zoned;
        if pin {
            let counter = log.counter();
            let mut available = budget.saturating_sub(ctx.measure(counter));
            for &p in log.pinned_memories() {
                let Some((key, content, category)) = pinned_memory(&log.events()[p].data) else {
                    continue;
                };
                let hit = MemoryHit {
                    key: key.to_string(),
                    content: content.to_string(),
                    category: category.to_string(),
                    tokens: None,
                };
                if ctx.pinned_memories.iter().any(|h| h.key == hit.key) {
                    continue;
                }
                let cost = counter.count(&hit.content) + counter.count(&hit.key) + 3;
                if cost <= available {
                    available -= cost;
                    ctx.pinned_memories.push(hit);
                } else {
                    list_omitted_memory(&mut ctx, &hit.key, cost);
                }
            }
            ctx.measure(counter);
        }
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
            let known = |hits: &[MemoryHit]| hits.iter().any(|h| h.key == e.key);
            if known(&ctx.memory_hits) || known(&ctx.pinned_memories) {
                continue;
            }
            let tokens = counter.count(&e.content);
            let cost = tokens + counter.count(&e.key) + 3;
            if cost > available {
                list_omitted_memory(&mut ctx, &e.key, cost);
                continue;
            }
            available -= cost;
            let hit = MemoryHit {
                key: e.key,
                content: e.content,
                category: e.category,
                tokens: Some(tokens),
            };
            if pin {
                writes.record(
                    MEMORY_HIT,
                    json!({"key": hit.key, "content": hit.content, "category": hit.category, "pinned": true}),
                );
                ctx.pinned_memories.push(hit);
            } else {
                ctx.memory_hits.push(hit);
            }
        }
        ctx.measure(counter);
        Ok(ctx)
    }
}
