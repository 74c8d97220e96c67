//! What a selecting processor leaves out for the budget, listed in the
//! context's `dropped` so no omission is silent.

use crate::session::EventLog;
use crate::working_context::{DropAction, DroppedItem, Section, WorkingContext};

/// At most this many omitted events are listed by one processor in one
/// compile (a selection window of every turn could otherwise list the
/// whole session).
pub(crate) const MAX_LISTED: usize = 256;

/// Lists the events at `positions` of `log` as dropped from `section`, each
/// with the tokens it would have cost, up to [`MAX_LISTED`].
pub(crate) fn list_omitted(
    ctx: &mut WorkingContext,
    log: &EventLog,
    section: Section,
    positions: impl IntoIterator<Item = usize>,
) {
    let overhead = log.counter().message_overhead();
    for p in positions.into_iter().take(MAX_LISTED) {
        let event = &log.events()[p];
        ctx.dropped.push(DroppedItem::new(
            section,
            DropAction::Dropped,
            Some(event.event_id.clone()),
            log.rendered_tokens(p) + overhead,
        ));
    }
}

/// Lists a memory left out for the budget, by its key.
pub(crate) fn list_omitted_memory(ctx: &mut WorkingContext, key: &str, tokens: u64) {
    ctx.dropped.push(DroppedItem {
        key: Some(key.to_string()),
        ..DroppedItem::new(Section::MemoryHits, DropAction::Dropped, None, tokens)
    });
}
