//! The compile's step for the providers' own compaction (see
//! [`crate::session::provider_compaction`]): in its format, the latest one
//! stands in for every turn recorded before it (folded, in the ledger as
//! `compacted`); in any other format, each is left out (`refused`) and the
//! turns themselves, or this library's summary, stay.

use std::collections::HashSet;

use crate::session::provider_compaction::recorded;
use crate::session::Session;
use crate::tokens::TokenCounter;
use crate::working_context::{
    provider_compaction_tokens, DropAction, DroppedItem, HistoryMessage, ProviderCompaction,
    ProviderFormat, Section, WorkingContext,
};

/// Applies the session's provider compactions to `ctx`, compiled for
/// `format` (none: the plain format).
pub(crate) fn apply(
    ctx: &mut WorkingContext,
    session: &Session,
    format: Option<ProviderFormat>,
    counter: &dyn TokenCounter,
) {
    let log = session.event_log();
    let all = recorded(log);
    if all.is_empty() {
        return;
    }
    let latest = format.and_then(|f| all.iter().rev().find(|c| c.format == Some(f)));
    for c in &all {
        if latest.is_some_and(|l| l.position >= c.position) {
            continue;
        }
        let tokens = provider_compaction_tokens(c.items, counter);
        ctx.dropped.push(DroppedItem::new(
            Section::History,
            DropAction::Refused,
            Some(c.event_id.to_string()),
            tokens,
        ));
    }
    let (Some(latest), Some(format)) = (latest, format) else {
        return;
    };
    let before = latest.position;
    let mut folded: Vec<DroppedItem> = Vec::new();
    fold_where(ctx, &mut folded, |h| h.position.is_some_and(|p| p < before));
    // A result whose call was folded goes with it.
    let calls: HashSet<String> = ctx
        .history
        .iter()
        .flat_map(|h| h.tool_calls.iter().map(|c| c.id.clone()))
        .collect();
    fold_where(ctx, &mut folded, |h| {
        h.tool_call_id
            .as_ref()
            .is_some_and(|id| !calls.contains(id))
    });
    // This library's summary of turns the provider folded too says it again.
    let summary_folded = log.compaction().is_some_and(|state| {
        state.summary.is_some()
            && state.summary == ctx.summary
            && state.summarized_through.is_some_and(|t| t < before)
    });
    if summary_folded {
        ctx.summary = None;
    }
    ctx.dropped.extend(folded);
    let items = latest.items.to_vec();
    ctx.provider_compaction = Some(ProviderCompaction {
        format: format.as_str().to_string(),
        event_id: latest.event_id.to_string(),
        position: latest.position,
        tokens: provider_compaction_tokens(&items, counter),
        items,
    });
}

/// Takes the history messages `folds` picks out of `ctx`, noting each in
/// `folded` as summarised (by the provider).
fn fold_where(
    ctx: &mut WorkingContext,
    folded: &mut Vec<DroppedItem>,
    folds: impl Fn(&HistoryMessage) -> bool,
) {
    ctx.history.retain(|h| {
        if !folds(h) {
            return true;
        }
        folded.push(DroppedItem::new(
            Section::History,
            DropAction::Summarized,
            h.event_id.clone(),
            h.tokens.unwrap_or(0),
        ));
        false
    });
}
