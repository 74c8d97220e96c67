//! What a model answers a run: the [`Model`] a run calls, and its answer,
//! a whole [`ModelReply`] or a [`ReplyStream`] of chunks (which
//! [`crate::runner::StreamReader`] reads into one).

use async_trait::async_trait;
use serde_json::Value;

use crate::error::Result;
use crate::runner::model::{ModelReply, ModelRequest};

/// The chunks of a streamed reply, read one at a time (a host's async
/// iterator). `None` ends the stream.
#[async_trait(?Send)]
pub trait ReplyStream {
    /// The next chunk, `None` at the end; an error ends the stream.
    async fn next_chunk(&mut self) -> Result<Option<Value>>;
}

/// What a model answers: a whole reply, or a stream of chunks.
pub enum ModelAnswer {
    /// The whole reply at once.
    Reply(ModelReply),
    /// A reply streamed in chunks.
    Stream(Box<dyn ReplyStream>),
}

/// The model a run calls (single-threaded, no `Send` bound): given the
/// compiled context and the tools, it answers with text and tool calls.
#[async_trait(?Send)]
pub trait Model {
    /// Answers one request.
    async fn respond(&self, request: ModelRequest<'_>) -> Result<ModelReply>;

    /// Answers one request with a whole reply or a stream of chunks (see
    /// [`crate::runner::StreamReader`]); the runner calls this. By default,
    /// [`Model::respond`]'s whole reply.
    async fn respond_streaming(&self, request: ModelRequest<'_>) -> Result<ModelAnswer> {
        self.respond(request).await.map(ModelAnswer::Reply)
    }
}
