//! Normalisation of tool outputs for a model: secret redaction, JSON Schema
//! validation and summaries, put together by the [`aligner::PerceptionAligner`].

pub mod aligner;
pub mod redact;
pub mod schemas;
pub mod summary;
