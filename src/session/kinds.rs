//! The event kinds the library records and reads, each spelled once: the
//! session's, the tool interrupts' and the compilers' events.

/// The event kind of user turns.
pub const USER_INPUT: &str = "user_input";
/// The event kind of assistant turns.
pub const ASSISTANT_OUTPUT: &str = "assistant_output";
/// The event kind of pipeline phase results (assistant turns).
pub const PHASE_RESULT: &str = "phase_result";
/// The event kind of a successful tool call.
pub const TOOL_SUCCESS: &str = "tool_success";
/// The event kind of a failed tool call.
pub const TOOL_ERROR: &str = "tool_error";
/// The event kind of a tool call that timed out.
pub const TOOL_TIMEOUT: &str = "tool_timeout";
/// The event kind recorded when a payload is externalised to an artifact store.
pub const ARTIFACT_STORED: &str = "artifact_stored";
/// The event kind of a tool call (its id is the call's `call_id`).
pub const TOOL_CALL: &str = "tool_call";
/// The event kind a zoned compile records when it compacts the context.
pub const CONTEXT_COMPACTED: &str = "context_compacted";
/// The event kind of a recalled memory; with `"pinned": true` in its data it
/// stays in the zoned layout's PERSISTENT zone for the rest of the session.
pub const MEMORY_HIT: &str = "memory_hit";
/// The kind of the event recording a guard's decision .
pub const GUARD_DECISION: &str = "guard_decision";
/// The kind of the event recording what a provider reported a model call
/// cost (see [`crate::session::ModelUsage`]).
pub const MODEL_USAGE: &str = "model_usage";
/// The kind of the event asking a person to decide on a recorded tool call
/// before it runs (see [`crate::session::approvals`]).
pub const APPROVAL_REQUESTED: &str = "approval_requested";
/// The kind of the event recording a person's decision on a call that
/// waited: approved, approved with edited arguments, or refused.
pub const APPROVAL_DECIDED: &str = "approval_decided";
/// The kind of the event recording a provider's own compaction as it came
/// (`{ format, items }`: Anthropic's `compaction` block, or the output of
/// OpenAI's `responses.compact`); never redacted, rendered in its own
/// format only (see [`crate::session::Session::record_provider_compaction`]).
pub const PROVIDER_COMPACTION: &str = "provider_compaction";
