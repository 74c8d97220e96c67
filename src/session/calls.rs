//! Which tool outcome answers which tool call.
//!
//! Outcomes name their call by id: the provider's `call_id` when the call
//! was recorded with one, else the `tool_call` event's own id. Providers do
//! not all keep ids unique: llama.cpp, Kimi and some Grok endpoints restart
//! at `call_0` every turn, and some give two calls of one reply the same
//! id. The rule:
//!
//! - every `tool_call` is a call; one recorded under an id already used is
//!   a new call under that id (a *generation*), unless the id's latest call
//!   is an outcome recorded before its call, which it then joins;
//! - an outcome answers the oldest call of its id still unanswered; with
//!   none, it is a retry of the id's latest call (the latest outcome
//!   answers it); naming a call's event id, it answers that call.
//!
//! Requests need unique ids: the first call under an id is sent under it,
//! every later one under a renamed id ([`superseded_call_id`]), so what was
//! sent once is sent the same at every later call (the prompt cache's
//! prefix holds).

use std::borrow::Cow;
use std::collections::HashMap;

use crate::wire::names::superseded_call_id;

/// One call: where it was recorded and answered, under which id.
#[derive(Debug)]
struct Slot {
    id: String,
    generation: u32,
    call: Option<usize>,
    outcome: Option<usize>,
}

/// The pairing of a log's tool calls and outcomes, built as events are
/// appended.
#[derive(Debug, Default)]
pub(crate) struct CallPairs {
    slots: Vec<Slot>,
    /// Each id's calls, oldest first.
    by_id: HashMap<String, Vec<usize>>,
    /// The call of each `tool_call` event id.
    by_event: HashMap<String, usize>,
    /// The call each `tool_call` or outcome position belongs to.
    slot_at: HashMap<usize, usize>,
}

impl CallPairs {
    /// A new call under `id`, the next generation of it.
    fn open(&mut self, id: &str) -> usize {
        let slot = self.slots.len();
        let generations = self.by_id.entry(id.to_string()).or_default();
        self.slots.push(Slot {
            id: id.to_string(),
            generation: u32::try_from(generations.len()).unwrap_or(u32::MAX),
            call: None,
            outcome: None,
        });
        generations.push(slot);
        slot
    }

    /// Indexes the `tool_call` event `event_id` at `position`, recorded
    /// with the provider's `call_id` when it has one.
    pub(crate) fn add_call(&mut self, position: usize, event_id: &str, call_id: Option<&str>) {
        let id = call_id.unwrap_or(event_id);
        let early_outcome = self
            .by_id
            .get(id)
            .and_then(|g| g.last().copied())
            .filter(|&s| self.slots[s].call.is_none());
        let slot = match early_outcome {
            Some(s) => s,
            None => self.open(id),
        };
        self.slots[slot].call = Some(position);
        self.slot_at.insert(position, slot);
        self.by_event.insert(event_id.to_string(), slot);
    }

    /// Indexes the outcome at `position` naming the call `call_id`.
    #[cfg(test)]
    pub(crate) fn add_outcome(&mut self, position: usize, call_id: &str) {
        self.add_outcome_passing(position, call_id, |_| false);
    }

    /// Indexes the outcome at `position` naming the call `call_id`, which
    /// answers the oldest unanswered call of that id that `waits` does not
    /// hold (a call waiting for a person's decision, when another call of
    /// one reply under its id ran at once), else the oldest unanswered.
    pub(crate) fn add_outcome_passing(
        &mut self,
        position: usize,
        call_id: &str,
        waits: impl Fn(usize) -> bool,
    ) {
        let named = self.by_event.get(call_id).copied();
        let unanswered = || {
            self.by_id.get(call_id).and_then(|g| {
                let open =
                    |&s: &usize| self.slots[s].outcome.is_none() && self.slots[s].call.is_some();
                let free = |s: &usize| open(s) && self.slots[*s].call.is_some_and(|c| !waits(c));
                g.iter()
                    .copied()
                    .find(free)
                    .or_else(|| g.iter().copied().find(open))
                    .or_else(|| g.last().copied())
            })
        };
        let slot = match named.or_else(unanswered) {
            Some(s) => s,
            None => self.open(call_id),
        };
        self.slots[slot].outcome = Some(position);
        self.slot_at.insert(position, slot);
    }

    /// The latest `tool_call` under `id` that has no outcome yet, if any.
    pub(crate) fn unanswered_call(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).and_then(|g| {
            g.iter()
                .rev()
                .map(|&s| &self.slots[s])
                .find(|s| s.outcome.is_none())
                .and_then(|s| s.call)
        })
    }

    fn slot(&self, position: usize) -> Option<&Slot> {
        self.slot_at.get(&position).map(|&s| &self.slots[s])
    }

    /// The outcome answering the `tool_call` at `position` (its latest),
    /// if any.
    pub(crate) fn answer(&self, call_position: usize) -> Option<usize> {
        self.slot(call_position)
            .filter(|s| s.call == Some(call_position))
            .and_then(|s| s.outcome)
    }

    /// The `tool_call` the outcome at `position` answers, if one was
    /// recorded.
    pub(crate) fn call_of(&self, outcome_position: usize) -> Option<usize> {
        self.slot(outcome_position).and_then(|s| s.call)
    }

    /// Whether the outcome at `position` is its call's latest answer (an
    /// outcome naming no call always is).
    pub(crate) fn is_latest_answer(&self, outcome_position: usize) -> bool {
        self.slot(outcome_position)
            .is_none_or(|s| s.outcome == Some(outcome_position))
    }

    /// The id the call of the `tool_call` or outcome at `position` is sent
    /// under: its own for the first call with that id, a renamed one for a
    /// later call the provider gave the same id. `None` when the event
    /// belongs to no call.
    pub(crate) fn wire_id(&self, position: usize) -> Option<Cow<'_, str>> {
        let slot = self.slot(position)?;
        Some(if slot.generation == 0 {
            Cow::Borrowed(slot.id.as_str())
        } else {
            Cow::Owned(superseded_call_id(&slot.id, slot.generation))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reused_id_after_an_outcome_starts_a_new_call() {
        let mut pairs = CallPairs::default();
        pairs.add_call(0, "e0", Some("call_0"));
        pairs.add_outcome(1, "call_0");
        pairs.add_call(2, "e2", Some("call_0"));
        pairs.add_outcome(3, "call_0");
        assert_eq!((pairs.answer(0), pairs.answer(2)), (Some(1), Some(3)));
        assert_eq!((pairs.call_of(1), pairs.call_of(3)), (Some(0), Some(2)));
        // The first keeps the id; the later one is renamed, the same for
        // its outcome, and stays so as more calls come.
        assert_eq!(pairs.wire_id(0).as_deref(), Some("call_0"));
        let later = pairs.wire_id(2).expect("renamed").into_owned();
        assert_ne!(later, "call_0");
        assert_eq!(pairs.wire_id(3).as_deref(), Some(later.as_str()));
        pairs.add_call(4, "e4", Some("call_0"));
        assert_eq!(pairs.wire_id(2).as_deref(), Some(later.as_str()));
    }

    #[test]
    fn an_outcome_without_a_new_call_is_a_retry() {
        let mut pairs = CallPairs::default();
        pairs.add_call(0, "e0", Some("c"));
        pairs.add_outcome(1, "c");
        pairs.add_outcome(2, "c");
        assert_eq!(pairs.answer(0), Some(2));
        assert!(!pairs.is_latest_answer(1) && pairs.is_latest_answer(2));
        assert_eq!(pairs.wire_id(0).as_deref(), Some("c"));
    }

    #[test]
    fn two_calls_of_one_reply_under_one_id_are_answered_in_order() {
        let mut pairs = CallPairs::default();
        pairs.add_call(0, "e0", Some("c"));
        pairs.add_call(1, "e1", Some("c"));
        pairs.add_outcome(2, "c");
        pairs.add_outcome(3, "c");
        assert_eq!((pairs.answer(0), pairs.answer(1)), (Some(2), Some(3)));
        assert_ne!(pairs.wire_id(0), pairs.wire_id(1));
        // An outcome naming a call's event id answers that call.
        pairs.add_outcome(4, "e0");
        assert_eq!(pairs.answer(0), Some(4));
    }

    #[test]
    fn an_outcome_recorded_before_its_call_is_joined_by_it() {
        let mut pairs = CallPairs::default();
        pairs.add_outcome(0, "call_0");
        pairs.add_call(1, "e1", Some("call_0"));
        assert_eq!((pairs.answer(1), pairs.call_of(0)), (Some(0), Some(1)));
        assert_eq!(pairs.wire_id(1).as_deref(), Some("call_0"));
    }
}
