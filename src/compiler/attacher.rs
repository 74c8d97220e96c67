//! Artifact externalisation: large tool results become handles, and so does
//! an oversized question (its head and tail stay).

use std::rc::Rc;

use async_trait::async_trait;
use serde_json::json;

use crate::artifacts::{ArtifactStore, StoreOptions};
use crate::compiler::exchanges::artifact_content;
use crate::compiler::fit_zoned::cut_question;
use crate::compiler::processor::{Processor, SessionWrites};
use crate::error::Result;
use crate::session::{Session, ARTIFACT_STORED, USER_INPUT};
use crate::tools::look_back::is_look_back;
use crate::working_context::{ArtifactRef, WorkingContext};

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
pub struct ArtifactAttacher {
    store: Rc<dyn ArtifactStore>,
    threshold_bytes: usize,
}

impl ArtifactAttacher {
    /// Externalises results of at least `threshold_bytes` bytes to `store`.
    pub fn new(store: Rc<dyn ArtifactStore>, threshold_bytes: usize) -> Self {
        ArtifactAttacher {
            store,
            threshold_bytes,
        }
    }

    /// The size from which results are externalised.
    pub fn threshold_bytes(&self) -> usize {
        self.threshold_bytes
    }
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
        let mut kept = Vec::with_capacity(ctx.tool_results.len());
        for tr in std::mem::take(&mut ctx.tool_results) {
            if let Some(existing) = tr.event_id.as_deref().and_then(|id| log.externalized(id)) {
                ctx.artifact_refs.push(existing.clone());
                continue;
            }
            if tr.result.len() < self.threshold_bytes || is_look_back(&tr.tool) {
                kept.push(tr);
                continue;
            }
            let r = self
                .externalize(session, &tr.result, &tr.tool, tr.event_id, writes)
                .await?;
            ctx.artifact_refs.push(r);
        }
        ctx.tool_results = kept;
        // Zoned layout: tool results in the history are replaced in place, so
        // each call keeps its result.
        for i in 0..ctx.history.len() {
            let h = &ctx.history[i];
            if !h.is_tool_result() || h.artifact.is_some() || h.masked {
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
            let h = &mut ctx.history[i];
            h.content = artifact_content(&r);
            h.artifact = Some(r);
            h.tokens = None;
        }
        self.externalize_question(session, &mut ctx, budget, writes)
            .await?;
        ctx.measure(log.counter());
        Ok(ctx)
    }
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
        let h = &mut ctx.history[i];
        h.artifact = Some(r);
        h.content = cut_question(h, counter, budget / 2);
        h.tokens = None;
        Ok(())
    }
}
