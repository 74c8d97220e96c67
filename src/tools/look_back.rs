//! The look-back tools: `search_history` finds what the session said
//! earlier (also what left the context window), and `read_artifact` pages
//! through an externalised output. Both run in the library itself:
//! [`LookBack::call`] answers one call (what an integration's tools run),
//! and [`LookBackBridge`] puts them in front of the host's bridge, so a
//! run's calls are recorded like any other tool's.

use std::cell::RefCell;
use std::rc::Rc;

use async_trait::async_trait;
use serde_json::{json, Value};

use crate::artifacts::ArtifactStore;
use crate::error::{Error, ErrorCode, Result};
use crate::normalize::redact::redact;
use crate::session::search::event_text;
use crate::session::Session;
use crate::tools::{AbortSignal, ToolBridge, ToolFailure, ToolOutput};
use crate::zones::utc_minute;

pub use crate::session::look_back_names::{is_look_back, READ_ARTIFACT, SEARCH_HISTORY};
/// Results `search_history` gives by default.
pub const DEFAULT_SEARCH_RESULTS: usize = 5;
/// Results `search_history` gives at most.
pub const MAX_SEARCH_RESULTS: usize = 20;
/// Characters of each event's text `search_history` shows.
pub const SEARCH_TEXT_CHARS: usize = 600;
/// Bytes `read_artifact` returns by default.
pub const DEFAULT_PAGE_BYTES: usize = 4096;
/// Bytes `read_artifact` returns at most.
pub const MAX_PAGE_BYTES: usize = 16_384;

/// The look-back tools' definitions, to offer the model: an array of
/// `{ name, description, parameters }` (JSON Schema), the shape runs take
/// tools in.
pub fn look_back_definitions() -> Value {
    json!([
        {
            "name": SEARCH_HISTORY,
            "description": "Search everything said earlier in this conversation, including turns and tool outputs no longer shown. Returns the best matching events with their time and text.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Words to look for: names, numbers, dates, paths, topics."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_RESULTS, "description": "Results at most (default 5)."}
                },
                "required": ["query"],
                "additionalProperties": false
            }
        },
        {
            "name": READ_ARTIFACT,
            "description": "Read part of a stored tool output by its handle (shown in brackets where an output was stored instead of shown), or the whole text of a message cut short or a search_history result by its session event id. Returns the text from offset (bytes) and the offset to read next.",
            "parameters": {
                "type": "object",
                "properties": {
                    "handle": {"type": "string", "description": "The stored output's handle, or a session event id."},
                    "offset": {"type": "integer", "minimum": 0, "description": "Byte offset to start at (default 0)."},
                    "length": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE_BYTES, "description": "Bytes to read (default 4096)."}
                },
                "required": ["handle"],
                "additionalProperties": false
            }
        }
    ])
}

/// How many redacted texts `read_artifact` keeps for its next pages.
const REDACTED_CACHE: usize = 8;

/// The look-back tools over one session and its artifact store.
///
/// `read_artifact` serves only what the session's own events name (its
/// stored outputs, externalised outcomes, images and files, and its events
/// by id), whatever else a shared store holds; and it pages the whole text
/// redacted once, so that no page boundary can cut a secret into pieces the
/// redaction would not know.
pub struct LookBack {
    session: Rc<RefCell<Session>>,
    store: Option<Rc<dyn ArtifactStore>>,
    /// The redacted texts read last, newest last: (handle or event id, text).
    redacted: RefCell<Vec<(String, Rc<str>)>>,
}

impl LookBack {
    /// The look-back tools over `session`, reading stored outputs from
    /// `store`.
    pub fn new(session: Rc<RefCell<Session>>, store: Option<Rc<dyn ArtifactStore>>) -> Self {
        LookBack {
            session,
            store,
            redacted: RefCell::new(Vec::new()),
        }
    }

    /// Answers a call of the look-back tool `name` with `arguments` (as
    /// [`look_back_definitions`] declares them): the page or the search
    /// results as JSON. Fails with [`ErrorCode::InvalidArgument`] for
    /// another tool's name, arguments the tool does not take, or a handle
    /// the session does not name; with the store's error when it fails to
    /// read; with [`ErrorCode::SessionBusy`] when the session is held.
    pub async fn call(&self, name: &str, arguments: &Value) -> Result<Value> {
        match name {
            SEARCH_HISTORY => self.search(arguments),
            READ_ARTIFACT => self.read(arguments).await,
            _ => Err(invalid(&format!(
                "'{name}' is not a look-back tool ({SEARCH_HISTORY}, {READ_ARTIFACT})"
            ))),
        }
    }

    /// The redacted text kept for `key`, if any (it becomes the newest).
    fn cached(&self, key: &str) -> Option<Rc<str>> {
        let mut cache = self.redacted.borrow_mut();
        let i = cache.iter().position(|(k, _)| k == key)?;
        let entry = cache.remove(i);
        let text = entry.1.clone();
        cache.push(entry);
        Some(text)
    }

    /// `text` (the content of `key`) with its secrets redacted, the whole
    /// text at once; kept for the next pages of the same key.
    fn redacted(&self, key: &str, text: &str) -> Rc<str> {
        if let Some(text) = self.cached(key) {
            return text;
        }
        let text: Rc<str> = Rc::from(redact(text).text);
        let mut cache = self.redacted.borrow_mut();
        if cache.len() >= REDACTED_CACHE {
            cache.remove(0);
        }
        cache.push((key.to_string(), text.clone()));
        text
    }

    fn session(&self) -> Result<std::cell::Ref<'_, Session>> {
        self.session.try_borrow().map_err(|_| {
            Error::new(
                ErrorCode::SessionBusy,
                "the session is in use; look back again",
            )
        })
    }

    fn search(&self, arguments: &Value) -> Result<Value> {
        let query = arguments
            .get("query")
            .and_then(Value::as_str)
            .filter(|q| !q.trim().is_empty())
            .ok_or_else(|| invalid("search_history needs a non-empty string 'query'"))?;
        let limit = match arguments.get("limit") {
            None | Some(Value::Null) => DEFAULT_SEARCH_RESULTS,
            Some(v) => v
                .as_u64()
                .filter(|n| (1..=MAX_SEARCH_RESULTS as u64).contains(n))
                .map(|n| n as usize)
                .ok_or_else(|| {
                    invalid(&format!(
                        "search_history's 'limit' must be an integer from 1 to {MAX_SEARCH_RESULTS}"
                    ))
                })?,
        };
        let session = self.session()?;
        let events = session.event_log().all_events();
        let results: Vec<Value> = session
            .search(query, limit)
            .into_iter()
            .filter_map(|hit| {
                let event = events.get(hit.position)?;
                let text = event_text(event)?;
                Some(json!({
                    "eventId": hit.event_id,
                    "kind": hit.kind,
                    "time": utc_minute(event.timestamp),
                    // Redacted whole, then cut: a cut never splits a secret
                    // the redaction would then miss.
                    "text": cut(&redact(&text).text, SEARCH_TEXT_CHARS),
                }))
            })
            .collect();
        Ok(json!({ "query": query, "results": results }))
    }

    async fn read(&self, arguments: &Value) -> Result<Value> {
        let handle = arguments
            .get("handle")
            .and_then(Value::as_str)
            .map(|h| h.trim().trim_start_matches('[').trim_end_matches(']'))
            .filter(|h| !h.is_empty())
            .ok_or_else(|| invalid("read_artifact needs a string 'handle'"))?;
        let offset = byte_count(arguments, "offset", 0, usize::MAX)?;
        let length = byte_count(arguments, "length", DEFAULT_PAGE_BYTES, MAX_PAGE_BYTES)?.max(1);
        if let Some(text) = self.event_text(handle)? {
            let text = self.redacted(&format!("event:{handle}"), &text);
            return Ok(read_page(handle, &text, offset, length));
        }
        let unknown = || invalid(&format!("no stored output has the handle '{handle}'"));
        // Another session's handle is as unknown as a made-up one.
        if !self.session()?.event_log().names_artifact(handle) {
            return Err(unknown());
        }
        let store = self
            .store
            .as_ref()
            .ok_or_else(|| invalid("no artifact store: nothing was stored to read"))?;
        let key = format!("artifact:{handle}");
        let text = if let Some(text) = self.cached(&key) {
            text
        } else {
            let content = store
                .retrieve(handle)
                .await
                .map_err(|e| e.context("the artifact could not be read"))?
                .ok_or_else(unknown)?;
            let text = std::str::from_utf8(&content).map_err(|_| {
                invalid(&format!(
                    "the output '{handle}' is binary ({}), not text",
                    crate::tools::sniff_mime(&content)
                ))
            })?;
            self.redacted(&key, text)
        };
        Ok(read_page(handle, &text, offset, length))
    }

    /// The whole text of the session event `id` (a cut message names its
    /// event; a search result gives its event's id), if the session has it.
    fn event_text(&self, id: &str) -> Result<Option<String>> {
        let session = self.session()?;
        let log = session.event_log();
        let events = log.all_events();
        Ok(events
            .iter()
            .rev()
            .find(|e| e.event_id == id)
            .and_then(event_text)
            .map(std::borrow::Cow::into_owned))
    }
}

/// A bridge that runs the look-back tools itself ([`LookBack`]) and hands
/// every other call to the host's bridge (or fails it, when there is none).
pub struct LookBackBridge {
    inner: Option<Rc<dyn ToolBridge>>,
    look_back: LookBack,
}

impl LookBackBridge {
    /// Look-back over `session` and `store` in front of `inner`.
    pub fn new(
        inner: Option<Rc<dyn ToolBridge>>,
        session: Rc<RefCell<Session>>,
        store: Option<Rc<dyn ArtifactStore>>,
    ) -> Self {
        LookBackBridge {
            inner,
            look_back: LookBack::new(session, store),
        }
    }
}

/// The page of `text` from `offset`, as `read_artifact` answers it.
fn read_page(handle: &str, text: &str, offset: usize, length: usize) -> Value {
    let (start, end) = page(text, offset, length);
    json!({
        "handle": handle,
        "offset": start,
        "bytes": end - start,
        "totalBytes": text.len(),
        "text": &text[start..end],
        "nextOffset": if end < text.len() { json!(end) } else { Value::Null },
    })
}

#[async_trait(?Send)]
impl ToolBridge for LookBackBridge {
    async fn execute(
        &self,
        name: &str,
        arguments: &Value,
        signal: &AbortSignal,
        deadline_ms: f64,
    ) -> std::result::Result<ToolOutput, ToolFailure> {
        if is_look_back(name) {
            return self
                .look_back
                .call(name, arguments)
                .await
                .map(ToolOutput::Json)
                .map_err(|e| ToolFailure::Failed(e.message().to_string()));
        }
        match &self.inner {
            Some(inner) => inner.execute(name, arguments, signal, deadline_ms).await,
            None => Err(ToolFailure::Failed(format!(
                "no tool named '{name}' can run here"
            ))),
        }
    }
}

fn invalid(message: &str) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

/// A non-negative integer argument in bytes, at most `max`.
fn byte_count(arguments: &Value, key: &str, default: usize, max: usize) -> Result<usize> {
    match arguments.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => v
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .map(|n| n.min(max))
            .ok_or_else(|| {
                invalid(&format!(
                    "read_artifact's '{key}' must be a non-negative integer"
                ))
            }),
    }
}

/// The byte range of `text` from `offset` for `length` bytes, both ends
/// moved onto character boundaries: the start forward, the end back (but
/// past the start, so a page always moves on).
pub fn page(text: &str, offset: usize, length: usize) -> (usize, usize) {
    let mut start = offset.min(text.len());
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let mut end = start.saturating_add(length).min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    if end == start && start < text.len() {
        end = start + 1;
        while !text.is_char_boundary(end) {
            end += 1;
        }
    }
    (start, end)
}

/// `text` cut after `chars` characters, with an ellipsis when cut.
fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_string(),
    }
}
