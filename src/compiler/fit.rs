//! The compiler's last step: make the context fit its budget, exactly.

use crate::error::{Error, ErrorCode, Result};
use crate::tokens::{truncate_to_tokens, TokenCounter};
use crate::working_context::{DropAction, DroppedItem, Section, WorkingContext};
use context_compiler_text::order::{descending, sort_stable_by_key};
use std::rc::Rc;

/// A place in the context that holds text.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    System,
    History(usize),
    Memory(usize),
    Tool(usize),
    Artifact(usize),
}

impl Slot {
    fn section(self) -> Section {
        match self {
            Slot::System => Section::SystemPrompt,
            Slot::History(_) => Section::History,
            Slot::Memory(_) => Section::MemoryHits,
            Slot::Tool(_) => Section::ToolResults,
            Slot::Artifact(_) => Section::ArtifactRefs,
        }
    }
}

fn text_of(ctx: &WorkingContext, slot: Slot) -> &str {
    match slot {
        Slot::System => &ctx.system_prompt,
        Slot::History(i) => &ctx.history[i].content,
        Slot::Memory(i) => &ctx.memory_hits[i].content,
        Slot::Tool(i) => &ctx.tool_results[i].result,
        Slot::Artifact(i) => &ctx.artifact_refs[i].summary,
    }
}

fn event_of(ctx: &WorkingContext, slot: Slot) -> Option<String> {
    match slot {
        Slot::System | Slot::Memory(_) => None,
        Slot::History(i) => ctx.history[i].event_id.clone(),
        Slot::Tool(i) => ctx.tool_results[i].event_id.clone(),
        Slot::Artifact(i) => ctx.artifact_refs[i].event_id.clone(),
    }
}

fn slots(ctx: &WorkingContext) -> impl Iterator<Item = Slot> + '_ {
    std::iter::once(Slot::System)
        .chain((0..ctx.history.len()).map(Slot::History))
        .chain((0..ctx.memory_hits.len()).map(Slot::Memory))
        .chain((0..ctx.tool_results.len()).map(Slot::Tool))
        .chain((0..ctx.artifact_refs.len()).map(Slot::Artifact))
}

fn remove(ctx: &mut WorkingContext, slot: Slot) {
    match slot {
        Slot::System => ctx.system_prompt.clear(),
        Slot::History(i) => {
            ctx.history.remove(i);
        }
        Slot::Memory(i) => {
            ctx.memory_hits.remove(i);
        }
        Slot::Tool(i) => {
            ctx.tool_results.remove(i);
        }
        Slot::Artifact(i) => {
            ctx.artifact_refs.remove(i);
        }
    }
}

fn replace(ctx: &mut WorkingContext, slot: Slot, text: String) {
    match slot {
        Slot::System => ctx.system_prompt = text,
        Slot::History(i) => {
            Rc::make_mut(&mut ctx.history[i]).content = text;
            Rc::make_mut(&mut ctx.history[i]).tokens = None;
        }
        Slot::Memory(i) => {
            ctx.memory_hits[i].content = text;
            ctx.memory_hits[i].tokens = None;
        }
        Slot::Tool(i) => {
            ctx.tool_results[i].result = text;
            ctx.tool_results[i].tokens = None;
        }
        Slot::Artifact(i) => {
            ctx.artifact_refs[i].summary = text;
            ctx.artifact_refs[i].tokens = None;
        }
    }
}

/// Tokens a removed item may take with it beyond its text (its line's
/// markup, a section heading left empty).
const REMOVAL_MARGIN: u64 = 16;

/// Removes whole items, largest first, while even the most an item could
/// take with it leaves the context over budget: the removals the exact loop
/// would make one recount at a time, decided on counts taken once and
/// applied in one sweep, so thousands of items cost one pass. Stops at the
/// system prompt or the newest user message (the exact loop has rules for
/// those). Returns whether anything was removed.
fn remove_whole_items(ctx: &mut WorkingContext, over: u64, counter: &dyn TokenCounter) -> bool {
    let protected = newest_user(ctx).map(Slot::History);
    let mut sizes: Vec<(u64, usize, Slot)> = slots(ctx)
        .enumerate()
        .map(|(i, s)| (counter.count(text_of(ctx, s)), i, s))
        .collect();
    sort_stable_by_key(&mut sizes, |&(tokens, i, _)| {
        (descending(tokens), descending(i as u64))
    });
    // A lower bound of what is over once the chosen items are gone.
    let mut left = over;
    let mut doomed = Vec::new();
    for &(tokens, _, slot) in &sizes {
        if tokens == 0 || slot == Slot::System || Some(slot) == protected || left < tokens {
            break;
        }
        left = left.saturating_sub(tokens + counter.message_overhead() + REMOVAL_MARGIN);
        doomed.push((tokens, slot));
    }
    if doomed.len() < 2 {
        // One item: the exact loop removes it with an exact count.
        return false;
    }
    for &(tokens, slot) in &doomed {
        ctx.dropped.push(DroppedItem::new(
            slot.section(),
            DropAction::Dropped,
            event_of(ctx, slot),
            tokens,
        ));
    }
    let gone = |section: Section| -> Vec<bool> {
        let len = match section {
            Section::History => ctx.history.len(),
            Section::MemoryHits => ctx.memory_hits.len(),
            Section::ToolResults => ctx.tool_results.len(),
            _ => ctx.artifact_refs.len(),
        };
        let mut mask = vec![false; len];
        for &(_, slot) in &doomed {
            match slot {
                Slot::History(i) | Slot::Memory(i) | Slot::Tool(i) | Slot::Artifact(i)
                    if slot.section() == section =>
                {
                    mask[i] = true
                }
                _ => {}
            }
        }
        mask
    };
    let masks = [
        gone(Section::History),
        gone(Section::MemoryHits),
        gone(Section::ToolResults),
        gone(Section::ArtifactRefs),
    ];
    retain_unmasked(&mut ctx.history, &masks[0]);
    retain_unmasked(&mut ctx.memory_hits, &masks[1]);
    retain_unmasked(&mut ctx.tool_results, &masks[2]);
    retain_unmasked(&mut ctx.artifact_refs, &masks[3]);
    true
}

/// Keeps the items of `items` whose `mask` entry is `false`.
fn retain_unmasked<T>(items: &mut Vec<T>, mask: &[bool]) {
    let mut i = 0;
    items.retain(|_| {
        i += 1;
        !mask[i - 1]
    });
}

/// The position of the newest user message in `ctx`'s history.
fn newest_user(ctx: &WorkingContext) -> Option<usize> {
    ctx.history.iter().rposition(|m| m.role == "user")
}

/// Makes `ctx` fit `budget` under `counter` and sets its exact token count.
///
/// First drops history from the middle (the oldest turns after the first,
/// never the newest user message), then repeatedly truncates the largest
/// remaining item (removing items whose text cannot shrink enough; the
/// newest user message only when nothing else is left to cut), recording
/// every change in `ctx.dropped`. Fails
/// with [`ErrorCode::BudgetTooSmall`] only when even an empty context (one
/// system message) does not fit.
pub(crate) fn fit_to_budget(
    mut ctx: WorkingContext,
    budget: u64,
    counter: &dyn TokenCounter,
) -> Result<WorkingContext> {
    ctx.budget = budget;
    loop {
        let exact = ctx.exact_token_count(counter);
        if exact <= budget {
            ctx.token_count = exact;
            return Ok(ctx);
        }
        let mut over = exact - budget;

        // The middle of the history goes first: the oldest turns after the
        // first, never the last turn or the newest user message; chosen in
        // one pass and removed in one sweep.
        let protected = newest_user(&ctx);
        let last = ctx.history.len().saturating_sub(1);
        let mut doomed = vec![false; ctx.history.len()];
        let mut any = false;
        for (i, m) in ctx.history.iter().enumerate().take(last).skip(1) {
            if over == 0 {
                break;
            }
            if Some(i) == protected {
                continue;
            }
            let removed =
                m.tokens.unwrap_or_else(|| counter.count(&m.content)) + counter.message_overhead();
            over = over.saturating_sub(removed);
            doomed[i] = true;
            any = true;
            ctx.dropped.push(DroppedItem::new(
                Section::History,
                DropAction::Dropped,
                m.event_id.clone(),
                removed,
            ));
        }
        if any {
            retain_unmasked(&mut ctx.history, &doomed);
            continue;
        }
        if remove_whole_items(&mut ctx, over, counter) {
            continue;
        }
        // Images and files, oldest first, before any text is cut.
        let all = 0..ctx.history.len();
        if crate::compiler::fit_zoned::strip_first_media(&mut ctx, all) {
            continue;
        }

        // The largest item is cut; the newest user message down to half the
        // budget, or further only when nothing else can shrink.
        let protected = newest_user(&ctx).map(Slot::History);
        // Largest first; on a tie, the later item.
        // An empty text cannot be cut (a counter may count tokens for it: a
        // BOS token); it counts as 0 here.
        let mut sizes: Vec<(u64, usize, Slot)> = slots(&ctx)
            .enumerate()
            .map(|(i, s)| {
                let t = text_of(&ctx, s);
                (if t.is_empty() { 0 } else { counter.count(t) }, i, s)
            })
            .collect();
        sort_stable_by_key(&mut sizes, |&(tokens, i, _)| {
            (descending(tokens), descending(i as u64))
        });
        let largest = sizes
            .iter()
            .find(|(t, _, s)| *t > 0 && (Some(*s) != protected || *t > over || *t > budget / 2))
            .or_else(|| sizes.first())
            .map(|&(t, _, s)| (t, s));
        let (tokens, slot) = match largest {
            Some((t, s)) if t > 0 => (t, s),
            _ => {
                // Only structure is left: remove whole items, newest history last.
                let item = slots(&ctx).find(|s| *s != Slot::System);
                match item {
                    Some(slot) => {
                        let event_id = event_of(&ctx, slot);
                        remove(&mut ctx, slot);
                        let after = ctx.exact_token_count(counter);
                        ctx.dropped.push(DroppedItem::new(
                            slot.section(),
                            DropAction::Dropped,
                            event_id,
                            exact.saturating_sub(after),
                        ));
                        continue;
                    }
                    None => {
                        return Err(Error::new(
                            ErrorCode::BudgetTooSmall,
                            format!(
                                "a budget of {budget} tokens cannot hold even an empty context ({exact} tokens)"
                            ),
                        ))
                    }
                }
            }
        };
        let event_id = event_of(&ctx, slot);
        // The newest user message keeps at least half the budget while
        // other items can still shrink.
        let target = if Some(slot) == protected && tokens > budget / 2 {
            tokens.saturating_sub(over).max(budget / 2)
        } else {
            tokens.saturating_sub(over)
        };
        let mut cut = truncate_to_tokens(counter, text_of(&ctx, slot), target);
        if cut.len() >= text_of(&ctx, slot).len() {
            // No shorter head fits (a counter that is not monotonic): the
            // text goes, so every round makes progress.
            cut = String::new();
        }
        let action = if cut.is_empty() && slot != Slot::System {
            remove(&mut ctx, slot);
            DropAction::Dropped
        } else {
            replace(&mut ctx, slot, cut);
            DropAction::Truncated
        };
        let after = ctx.exact_token_count(counter);
        ctx.dropped.push(DroppedItem::new(
            slot.section(),
            action,
            event_id,
            exact.saturating_sub(after),
        ));
    }
}
