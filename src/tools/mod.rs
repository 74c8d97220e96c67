//! Tool interrupts: every tool call goes through a host-supplied async
//! [`ToolBridge`] with a timeout and an abort signal, yields typed
//! [`ToolEvent`]s recorded in the session, and has its output normalised and,
//! when large, externalised to an artifact store.

mod abort;
mod bridge;
mod events;
mod handler;
pub mod look_back;
mod notes;
mod spec;

pub use crate::media::sniff_mime;
pub use abort::AbortSignal;
pub use bridge::{ToolBridge, ToolContent, ToolFailure, ToolOutput};
pub use events::{ToolEvent, ToolEventInit, ToolEventKind};
pub use handler::{
    ToolInterruptHandler, ToolInterruptOptions, DEFAULT_EXTERNALIZE_BYTES, DEFAULT_TIMEOUT_MS,
};
pub use notes::CallNotes;
pub use spec::{
    request_tool_tokens, request_tools, ToolChoice, ToolSpec, ANTHROPIC_TOOL_PROMPT_TOKENS,
};
