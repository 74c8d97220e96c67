//! Normalisation of tool outputs: secret redaction (more to come: schema
//! validation and summaries for the PerceptionAligner).

pub mod redact;
pub mod schemas;
