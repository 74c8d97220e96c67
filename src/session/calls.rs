//! Which tool outcome answers which tool call.
//!
//! Outcomes name their call by id: the provider's `call_id` when the call
//! was recorded with one, else the `tool_call` event's own id. Providers do
//! not all keep ids unique: llama.cpp, Kimi and some Grok endpoints restart
//! at `call_0` every turn. The rule:
//!
//! - an outcome with no new `tool_call` before it is a retry of the call it
//!   names: the latest outcome answers it;
//! - a `tool_call` whose id already has an outcome starts a new call under
//!   that id (a *generation*); a `tool_call` recorded again before any
//!   outcome is the same call recorded twice (the latest record stands).
//!
//! Requests need unique ids, so every generation but the newest is sent
//! under a renamed id ([`superseded_call_id`]); the newest keeps the
//! provider's.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::working_context::names::superseded_call_id;

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
    /// The current call under each id (provider ids and call event ids).
    current: HashMap<String, usize>,
    /// The newest generation of each id.
    newest: HashMap<String, u32>,
    /// The call each `tool_call` or outcome position belongs to.
    slot_at: HashMap<usize, usize>,
}

impl CallPairs {
    /// A new call under `id`, the next generation of it.
    fn open(&mut self, id: &str) -> usize {
        let generation = match self.newest.get_mut(id) {
            Some(g) => {
                *g += 1;
                *g
            }
            None => {
                self.newest.insert(id.to_string(), 0);
                0
            }
        };
        self.slots.push(Slot {
            id: id.to_string(),
            generation,
            call: None,
            outcome: None,
        });
        let slot = self.slots.len() - 1;
        self.current.insert(id.to_string(), slot);
        slot
    }

    /// Indexes the `tool_call` event `event_id` at `position`, recorded
    /// with the provider's `call_id` when it has one.
    pub(crate) fn add_call(&mut self, position: usize, event_id: &str, call_id: Option<&str>) {
        let id = call_id.unwrap_or(event_id);
        let slot = match self.current.get(id) {
            Some(&s) if self.slots[s].outcome.is_none() => s,
            _ => self.open(id),
        };
        self.slots[slot].call = Some(position);
        self.slot_at.insert(position, slot);
        if call_id.is_some() {
            // An outcome may name the call by its event id too.
            self.current.insert(event_id.to_string(), slot);
        }
    }

    /// Indexes the outcome at `position` naming the call `call_id`.
    pub(crate) fn add_outcome(&mut self, position: usize, call_id: &str) {
        let slot = match self.current.get(call_id) {
            Some(&s) => s,
            None => self.open(call_id),
        };
        self.slots[slot].outcome = Some(position);
        self.slot_at.insert(position, slot);
    }

    fn slot(&self, position: usize) -> Option<&Slot> {
        self.slot_at.get(&position).map(|&s| &self.slots[s])
    }

    /// The outcome answering the `tool_call` at `position` (its latest),
    /// if any. A call recorded again later has its answer at that record.
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
    /// under: its own for the newest call with that id, a renamed one for
    /// an earlier call the provider gave the same id. `None` when the event
    /// belongs to no call.
    pub(crate) fn wire_id(&self, position: usize) -> Option<Cow<'_, str>> {
        let slot = self.slot(position)?;
        let newest = self.newest.get(&slot.id).copied().unwrap_or(0);
        Some(if slot.generation == newest {
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
        assert_eq!(pairs.wire_id(2).as_deref(), Some("call_0"));
        assert_eq!(pairs.wire_id(3).as_deref(), Some("call_0"));
        let old = pairs.wire_id(0).expect("renamed");
        assert_ne!(old, "call_0");
        assert_eq!(pairs.wire_id(1), Some(old));
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
    fn a_call_recorded_twice_before_its_outcome_is_one_call() {
        let mut pairs = CallPairs::default();
        pairs.add_call(0, "e0", Some("c"));
        pairs.add_call(1, "e1", Some("c"));
        pairs.add_outcome(2, "e1");
        assert_eq!((pairs.answer(0), pairs.answer(1)), (None, Some(2)));
        assert_eq!(pairs.wire_id(1).as_deref(), Some("c"));
    }
}
