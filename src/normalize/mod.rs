//! Normalisation of tool outputs for a model: secret redaction, JSON Schema
//! validation and summaries, put together by the [`aligner::PerceptionAligner`].

pub mod aligner;
pub use context_compiler_text::redact;
pub mod schemas;
pub mod sliced;
pub mod summary;
