//! The session's search: a lexical index of every text the session holds
//! (turns, tool arguments and outputs as recorded, compaction summaries),
//! brought up to date from the log when it is searched. It is derived from
//! the events alone, so a session imported or loaded from a store searches
//! exactly as the one that recorded them.

use std::borrow::Cow;
use std::collections::HashSet;

use serde::Serialize;
use serde_json::Value;

use context_compiler_recall::{Hit, RecallIndex};

use crate::session::render::{call_arguments, call_name, render};
use crate::session::SessionEvent;
use crate::session::{CONTEXT_COMPACTED, TOOL_CALL};

/// Results of a search by default.
pub const DEFAULT_SEARCH_LIMIT: usize = 10;
/// Results of a search at most.
pub const MAX_SEARCH_LIMIT: usize = 100;
/// Texts longer than this many bytes are indexed in chunks of this size (on
/// character boundaries), so a long tool output is found by the part that
/// matches and does not drown short turns in length normalisation.
pub const CHUNK_BYTES: usize = 4096;

/// One event a search found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct SearchHit {
    /// The event's id.
    pub event_id: String,
    /// Its position in the session log.
    pub position: usize,
    /// Its kind.
    pub kind: String,
    /// Its BM25 score: higher is more relevant.
    pub score: f64,
    /// The score over the most any event could score for the query's
    /// terms: 0 to 1, comparable across queries.
    pub relevance: f64,
    /// How far its score stands out from those of every event matching any
    /// of the query's terms, in standard deviations above their mean (0 when
    /// it does not stand out). A question about something said once finds
    /// it standing out; an instruction that shares only common words with
    /// everything finds nothing that does.
    pub distinction: f64,
}

/// The text of `event` that is indexed, if it has one.
pub(crate) fn event_text(event: &SessionEvent) -> Option<Cow<'_, str>> {
    // What the look-back tools return copies what is indexed already.
    let tool = ["tool", "tool_name"]
        .iter()
        .find_map(|k| event.data.get(*k).and_then(Value::as_str));
    if tool.is_some_and(crate::session::look_back_names::is_look_back) {
        return None;
    }
    if event.kind == TOOL_CALL {
        let arguments = call_arguments(&event.data);
        return Some(Cow::Owned(format!(
            "{} {}",
            call_name(&event.data),
            arguments
        )));
    }
    if event.kind == CONTEXT_COMPACTED {
        return event
            .data
            .get("summary")
            .and_then(Value::as_str)
            .map(Cow::Borrowed);
    }
    Some(render(&event.kind, &event.data)?.into_text())
}

/// `text` in pieces of at most [`CHUNK_BYTES`], cut on character boundaries.
fn chunks(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut end = rest.len().min(CHUNK_BYTES);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece)
    })
}

/// A session's index, how many of its events it holds, and the tool
/// outcomes whose stored output it holds too.
#[derive(Debug, Default)]
pub struct SessionRecall {
    index: RecallIndex,
    indexed: usize,
    stored: HashSet<usize>,
}

impl SessionRecall {
    /// Indexes the events after the ones already indexed.
    pub fn catch_up(&mut self, events: &[SessionEvent]) {
        for (position, event) in events.iter().enumerate().skip(self.indexed) {
            if let Some(text) = event_text(event) {
                self.add(position, &text);
            }
        }
        self.indexed = self.indexed.max(events.len());
    }

    fn add(&mut self, position: usize, text: &str) {
        for piece in chunks(text) {
            self.index.add(position, piece);
        }
    }

    /// Indexes `output`, the whole output the tool outcome at `position`
    /// stored as an artifact (its event holds only a summary), once.
    pub fn add_stored(&mut self, position: usize, output: &str) {
        if self.stored.insert(position) {
            self.add(position, output);
        }
    }

    /// Whether the stored output of the outcome at `position` is indexed.
    pub fn has_stored(&self, position: usize) -> bool {
        self.stored.contains(&position)
    }

    /// Events indexed so far.
    pub fn indexed(&self) -> usize {
        self.indexed
    }

    /// The events of `events` (the log this index was caught up with)
    /// matching `query` best, at most `limit` (capped at
    /// [`MAX_SEARCH_LIMIT`]).
    pub fn search(&self, events: &[SessionEvent], query: &str, limit: usize) -> Vec<SearchHit> {
        hits(
            events,
            self.index.search(query, limit.min(MAX_SEARCH_LIMIT)),
        )
    }

    /// As [`SessionRecall::search`], with `query` widened by the terms of
    /// the texts that match it best (pseudo-relevance feedback: a question
    /// about "family activities" also finds the turns about "the kids" that
    /// the best matches speak of).
    pub fn search_expanded(
        &self,
        events: &[SessionEvent],
        query: &str,
        limit: usize,
    ) -> Vec<SearchHit> {
        let limit = limit.min(MAX_SEARCH_LIMIT);
        let first = self.index.search(query, limit);
        let feedback: Vec<Cow<'_, str>> = first
            .iter()
            .take(FEEDBACK_TEXTS)
            .filter_map(|h| event_text(events.get(h.key)?))
            .collect();
        let feedback: Vec<&str> = feedback.iter().map(|t| t.as_ref()).collect();
        let added = self
            .index
            .expansion(query, &feedback, EXPANSION_TERMS, EXPANSION_WEIGHT);
        if added.is_empty() {
            return hits(events, first);
        }
        let mut terms: Vec<(String, f64)> = self
            .index
            .query_terms(query)
            .into_iter()
            .map(|t| (t, 1.0))
            .collect();
        terms.extend(added);
        hits(events, self.index.search_terms(&terms, limit))
    }
}

/// Texts that widen a query by default (see [`SessionRecall::search_expanded`]).
const FEEDBACK_TEXTS: usize = 5;
/// Terms a query is widened by.
const EXPANSION_TERMS: usize = 8;
/// The weight of the best added term (a query's own terms weigh 1).
const EXPANSION_WEIGHT: f64 = 0.4;

/// The index's hits as the events they are.
fn hits(events: &[SessionEvent], found: Vec<Hit>) -> Vec<SearchHit> {
    found
        .into_iter()
        .filter_map(|hit| {
            let event = events.get(hit.key)?;
            Some(SearchHit {
                event_id: event.event_id.clone(),
                position: hit.key,
                kind: event.kind.clone(),
                score: hit.score,
                relevance: hit.relevance,
                distinction: hit.distinction,
            })
        })
        .collect()
}
