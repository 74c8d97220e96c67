//! The processor contract and the writes a pipeline asks of the session.

use std::cell::RefCell;

use async_trait::async_trait;
use serde_json::Value;

use crate::error::Result;
use crate::session::render::externalized_ref;
use crate::session::{record_shared, EventLog, Session, ARTIFACT_STORED};
use crate::working_context::ArtifactRef;
use crate::working_context::WorkingContext;

/// Events a compile asks to append to the session once its pipeline has
/// finished. Processors read the session but never write it mid-pipeline, so
/// a failed compile leaves the session untouched.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SessionWrites {
    records: Vec<(String, Value)>,
}

impl SessionWrites {
    /// Asks for an event of `kind` with `data` to be recorded.
    pub fn record(&mut self, kind: &str, data: Value) {
        self.records.push((kind.to_string(), data));
    }

    /// The artifact that a record of this compile externalised the tool
    /// outcome `event_id` to.
    pub fn externalized(&self, event_id: &str) -> Option<ArtifactRef> {
        self.records
            .iter()
            .filter(|(kind, _)| kind == ARTIFACT_STORED)
            .find_map(|(_, data)| externalized_ref(data).filter(|(id, _)| id == event_id))
            .map(|(_, r)| r)
    }

    /// The requested records, in order.
    pub fn records(&self) -> &[(String, Value)] {
        &self.records
    }

    /// Records every requested event in `session`, except `artifact_stored`
    /// records for a payload the session already knows as externalised (two
    /// compiles may have raced to externalise it).
    pub fn apply(self, session: &mut Session) -> Result<()> {
        session.flush();
        for (kind, data) in self.records {
            if !already_externalized(session.event_log(), &kind, &data) {
                session.record(&kind, data, None)?;
            }
        }
        Ok(())
    }

    /// Like [`SessionWrites::apply`] on a shared session: when another
    /// compile still reads it, the records are queued behind the events
    /// recorded meanwhile (see [`record_shared`]) instead of failing.
    pub fn apply_shared(self, session: &RefCell<Session>) -> Result<()> {
        if let Ok(mut s) = session.try_borrow_mut() {
            return self.apply(&mut s);
        }
        for (kind, data) in self.records {
            let known = session
                .try_borrow()
                .is_ok_and(|s| already_externalized(s.event_log(), &kind, &data));
            if !known {
                record_shared(session, &kind, data, None)?;
            }
        }
        Ok(())
    }
}

/// A named, composable context processor (single-threaded, no `Send` bound).
#[async_trait(?Send)]
pub trait Processor {
    /// The processor's name, used in errors.
    fn name(&self) -> &str;

    /// Whether this processor selects the conversation history. A zoned
    /// compile whose pipeline has none starts with the newest user message
    /// and what follows it selected, so the question always reaches the
    /// model.
    fn selects_history(&self) -> bool {
        false
    }

    /// Returns the context transformed. `budget` is the compile's budget.
    async fn process(
        &self,
        session: &Session,
        ctx: WorkingContext,
        budget: u64,
        writes: &mut SessionWrites,
    ) -> Result<WorkingContext>;
}

/// Whether `log` already knows the payload an `artifact_stored` record
/// externalises (two compiles may have raced to externalise it).
fn already_externalized(log: &EventLog, kind: &str, data: &Value) -> bool {
    kind == ARTIFACT_STORED
        && data
            .get("event_id")
            .and_then(Value::as_str)
            .is_some_and(|id| log.externalized(id).is_some())
}
