//! Artifact externalisation: large tool results become handles, and so does
//! an oversized question (its head and tail stay). Results the model has not
//! read yet stay whole while the budget holds them.

use std::rc::Rc;

use async_trait::async_trait;
use serde_json::json;

use crate::artifacts::{ArtifactStore, StoreOptions};
use crate::compiler::exchanges::artifact_content;
use crate::compiler::fit_zoned::cut_question;
use crate::compiler::processor::{Processor, SessionWrites};
use crate::error::Result;
use crate::normalize::redact::redact;
use crate::session::{EventLog, Session, ARTIFACT_STORED, USER_INPUT};
use crate::tokens::TokenCounter;
use crate::tools::look_back::is_look_back;
use crate::working_context::{
    working_range, zoned_message_tokens, ArtifactRef, Layout, ToolResult, WorkingContext,
};

/// Replaces tool results of `threshold_bytes` or more (but the look-back
/// tools' pages) with artifact handles
/// and summaries, storing the payload in an [`ArtifactStore`]: the
/// single-system layout's tool results become artifact references; in the
/// zoned layout a tool message's content becomes the handle and summary, in
/// place.
///
/// Each payload is hashed and stored once: the first time, an
/// `artifact_stored` event naming the tool outcome (`event_id`) is recorded,
/// and later compiles take the handle from the session instead of hashing
/// again.
///
/// Unread results (recorded after the model's latest reply, see
/// [`EventLog::unread_from`]: what the model asked for and is about to
/// read) are stored too, but shown whole while the budget can hold them:
/// in the zoned layout, while the context's fixed parts, its pinned turns
/// and its RECENT zone fit with them (the final fit leaves out the oldest
/// WORKING turns to make room, and shows the handle instead when even that
/// is not enough); in the single-system layout, while the context fits with
/// them. A result externalised when it was recorded (a tool handler with a
/// store) is read back from this attacher's store for it, redacted. From
/// the next model call on they are handles like the others.
pub struct ArtifactAttacher {
    store: Rc<dyn ArtifactStore>,
    threshold_bytes: usize,
    keep_unread: bool,
}

impl ArtifactAttacher {
    /// Externalises results of at least `threshold_bytes` bytes to `store`,
    /// keeping unread ones whole while they fit.
    pub fn new(store: Rc<dyn ArtifactStore>, threshold_bytes: usize) -> Self {
        ArtifactAttacher {
            store,
            threshold_bytes,
            keep_unread: true,
        }
    }

    /// This attacher, keeping unread results whole while they fit (`true`,
    /// the default) or externalising them at once like the others.
    pub fn keeping_unread(mut self, keep: bool) -> Self {
        self.keep_unread = keep;
        self
    }

    /// The size from which results are externalised.
    pub fn threshold_bytes(&self) -> usize {
        self.threshold_bytes
    }

    /// Whether unread results are shown whole while they fit.
    pub fn keep_unread(&self) -> bool {
        self.keep_unread
    }
}

/// An unread result the attacher may show whole: where it is, its whole
/// text and the artifact it is stored as.
struct Unread {
    index: usize,
    text: String,
    artifact: ArtifactRef,
}

impl ArtifactAttacher {
    /// Stores the output of `tool` and asks for an `artifact_stored` record
    /// naming the outcome `event_id`.
    async fn externalize(
        &self,
        session: &Session,
        text: &str,
        tool: &str,
        event_id: Option<String>,
        writes: &mut SessionWrites,
    ) -> Result<ArtifactRef> {
        self.externalize_as(session, text, &format!("tool:{tool}"), event_id, writes)
            .await
    }

    /// Stores `text` from `source` and asks for an `artifact_stored` record
    /// naming the event `event_id`.
    async fn externalize_as(
        &self,
        session: &Session,
        text: &str,
        source: &str,
        event_id: Option<String>,
        writes: &mut SessionWrites,
    ) -> Result<ArtifactRef> {
        let source = source.to_string();
        let handle = self
            .store
            .store(
                text.as_bytes(),
                &source,
                StoreOptions {
                    mime_type: None,
                    session_id: Some(session.session_id().to_string()),
                },
            )
            .await?;
        let mut data = json!({
            "handle": handle.artifact_id,
            "source": source,
            "size_bytes": handle.size_bytes,
            "summary": handle.summary,
            "mime_type": handle.mime_type,
        });
        if let Some(id) = &event_id {
            data["event_id"] = json!(id);
        }
        writes.record(ARTIFACT_STORED, data);
        Ok(ArtifactRef {
            handle: handle.artifact_id,
            summary: handle.summary,
            size_bytes: handle.size_bytes,
            source,
            event_id,
            tokens: None,
        })
    }
}

#[async_trait(?Send)]
impl Processor for ArtifactAttacher {
    fn name(&self) -> &str {
        "artifact_attacher"
    }

    async fn process(
        &self,
        session: &Session,
        mut ctx: WorkingContext,
        budget: u64,
        writes: &mut SessionWrites,
    ) -> Result<WorkingContext> {
        let log = session.event_log();
        let unread_ids = self.unread_ids(log);
        let mut kept = Vec::with_capacity(ctx.tool_results.len());
        let mut unread_results = Vec::new();
        for tr in std::mem::take(&mut ctx.tool_results) {
            let unread = tr
                .event_id
                .as_ref()
                .is_some_and(|id| unread_ids.contains(id));
            if let Some(existing) = tr.event_id.as_deref().and_then(|id| log.externalized(id)) {
                if unread {
                    unread_results.push((tr.result.clone(), existing.clone()));
                }
                ctx.artifact_refs.push(existing.clone());
                continue;
            }
            if tr.result.len() < self.threshold_bytes || is_look_back(&tr.tool) {
                kept.push(tr);
                continue;
            }
            let text = tr.result.clone();
            let r = self
                .externalize(session, &tr.result, &tr.tool, tr.event_id, writes)
                .await?;
            if unread {
                unread_results.push((text, r.clone()));
            }
            ctx.artifact_refs.push(r);
        }
        ctx.tool_results = kept;
        // Single-system layout: artifact references of unread results
        // externalised when recorded.
        for r in &ctx.artifact_refs {
            let known = unread_results.iter().any(|(_, u)| u.event_id == r.event_id);
            if !known
                && r.event_id
                    .as_ref()
                    .is_some_and(|id| unread_ids.contains(id))
            {
                if let Some(text) = self.stored_text(log, &r.handle).await {
                    unread_results.push((text, r.clone()));
                }
            }
        }
        if ctx.layout != Layout::Zoned {
            show_unread_results(&mut ctx, unread_results, budget, log.counter());
        }
        // Zoned layout: tool results in the history are replaced in place, so
        // each call keeps its result.
        let mut unread = Vec::new();
        for i in 0..ctx.history.len() {
            let h = &ctx.history[i];
            if !h.is_tool_result() || h.masked {
                continue;
            }
            let is_unread = h
                .event_id
                .as_ref()
                .is_some_and(|id| unread_ids.contains(id));
            if let Some(r) = &h.artifact {
                // Externalised when it was recorded: read back to be shown.
                if is_unread {
                    if let Some(text) = self.stored_text(log, &r.handle).await {
                        let text = h.content.replacen(&artifact_content(r), &text, 1);
                        let artifact = r.clone();
                        unread.push(Unread {
                            index: i,
                            text,
                            artifact,
                        });
                    }
                }
                continue;
            }
            // A look-back page is a copy of what is stored: storing it
            // again would only hand the model another handle to read.
            if h.content.len() < self.threshold_bytes
                || h.tool_name.as_deref().is_some_and(is_look_back)
            {
                continue;
            }
            let tool = h.tool_name.clone().unwrap_or_else(|| "unknown".into());
            let event_id = h.event_id.clone();
            let r = self
                .externalize(session, &h.content, &tool, event_id, writes)
                .await?;
            let h = Rc::make_mut(&mut ctx.history[i]);
            let text = std::mem::replace(&mut h.content, artifact_content(&r));
            if is_unread {
                unread.push(Unread {
                    index: i,
                    text,
                    artifact: r.clone(),
                });
            }
            h.artifact = Some(r);
            h.tokens = None;
        }
        show_unread(&mut ctx, unread, budget, log.counter());
        self.externalize_question(session, &mut ctx, budget, writes)
            .await?;
        ctx.measure(log.counter());
        Ok(ctx)
    }
}

impl ArtifactAttacher {
    /// The ids of the outcomes the model has not read (none when unread
    /// results are not kept whole).
    fn unread_ids(&self, log: &EventLog) -> Vec<String> {
        if !self.keep_unread {
            return Vec::new();
        }
        let from = log.unread_from();
        log.events()
            .get(from..)
            .unwrap_or_default()
            .iter()
            .map(|e| e.event_id.clone())
            .collect()
    }

    /// The text stored as `handle` in this attacher's store, redacted;
    /// `None` when the store lacks it, fails, or holds bytes that are not
    /// text (the handle is shown then). Only an artifact the session's own
    /// events name is read.
    async fn stored_text(&self, log: &EventLog, handle: &str) -> Option<String> {
        if !log.names_artifact(handle) {
            return None;
        }
        let bytes = self.store.retrieve(handle).await.ok()??;
        let text = String::from_utf8(bytes).ok()?;
        if text.contains('\0') {
            return None;
        }
        Some(redact(&text).text)
    }
}

/// Zoned layout: shows `unread` results whole, in order, while the
/// context's fixed parts, pinned turns and RECENT zone fit `budget` with
/// them; the others keep their handle.
fn show_unread(
    ctx: &mut WorkingContext,
    unread: Vec<Unread>,
    budget: u64,
    counter: &dyn TokenCounter,
) {
    if unread.is_empty() {
        return;
    }
    let total = ctx.measure(counter);
    let overhead = counter.message_overhead();
    let std::ops::Range {
        start: pinned,
        end: recent,
    } = working_range(&ctx.history);
    // What the final fit may leave out to make room: WORKING's turns.
    let working: u64 = ctx.history[pinned..recent]
        .iter()
        .map(|h| h.tokens.unwrap_or_else(|| zoned_message_tokens(h, counter)) + overhead)
        .sum();
    let mut room = budget.saturating_sub(total.saturating_sub(working));
    for u in unread {
        let h = Rc::make_mut(&mut ctx.history[u.index]);
        let handle = h.tokens.unwrap_or_else(|| zoned_message_tokens(h, counter));
        let handle_content = std::mem::replace(&mut h.content, u.text);
        let artifact = h.artifact.take();
        let whole = zoned_message_tokens(h, counter);
        let extra = whole.saturating_sub(handle);
        if extra <= room && u.index >= recent {
            room -= extra;
            h.tokens = Some(whole);
            // A whole text no larger than its handle is never swapped back.
            h.whole_of = (whole > handle).then_some(u.artifact);
        } else {
            h.content = handle_content;
            h.artifact = artifact;
            h.tokens = Some(handle);
        }
    }
}

/// Single-system layout: brings `unread` results (text, artifact) back as
/// inline tool results, in order, while the context fits `budget` with them.
fn show_unread_results(
    ctx: &mut WorkingContext,
    unread: Vec<(String, ArtifactRef)>,
    budget: u64,
    counter: &dyn TokenCounter,
) {
    for (text, r) in unread {
        let Some(i) = ctx
            .artifact_refs
            .iter()
            .position(|a| a.event_id == r.event_id)
        else {
            continue;
        };
        let removed = ctx.artifact_refs.remove(i);
        ctx.tool_results.push(ToolResult {
            tool: r
                .source
                .strip_prefix("tool:")
                .unwrap_or(&r.source)
                .to_string(),
            result: text,
            event_id: r.event_id.clone(),
            tokens: None,
        });
        if ctx.measure(counter) > budget {
            ctx.tool_results.pop();
            ctx.artifact_refs.insert(i, removed);
        }
    }
    ctx.measure(counter);
}

impl ArtifactAttacher {
    /// Zoned layout: a newest user message of `threshold_bytes` or more that
    /// counts more than half the budget (a pasted log) is stored whole, and
    /// cut to half the budget: its head and tail around a marker naming the
    /// artifact.
    async fn externalize_question(
        &self,
        session: &Session,
        ctx: &mut WorkingContext,
        budget: u64,
        writes: &mut SessionWrites,
    ) -> Result<()> {
        let log = session.event_log();
        let counter = log.counter();
        let Some(i) = ctx.history.iter().rposition(|h| h.role == "user") else {
            return Ok(());
        };
        let h = &ctx.history[i];
        if h.artifact.is_some()
            || h.content.len() < self.threshold_bytes
            || counter.count(&h.content) <= budget / 2
        {
            return Ok(());
        }
        let known = h.event_id.as_deref().and_then(|id| log.externalized(id));
        let r = match known {
            Some(r) => r.clone(),
            None => {
                let (content, event_id) = (h.content.clone(), h.event_id.clone());
                self.externalize_as(session, &content, USER_INPUT, event_id, writes)
                    .await?
            }
        };
        let h = Rc::make_mut(&mut ctx.history[i]);
        h.artifact = Some(r);
        h.content = cut_question(h, counter, budget / 2);
        h.tokens = None;
        Ok(())
    }
}
