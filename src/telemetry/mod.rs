//! Spans for tracing: the seam a host's tracer (OpenTelemetry's, in the
//! npm package) plugs into, and the spans the library emits through it.
//!
//! The core knows no tracing library: a [`Tracer`] starts [`Span`]s with a
//! name, a kind, [`Attribute`]s and a parent, and a span takes more
//! attributes, a failure and its end. [`genai`] says which spans a run and
//! a compile emit and with which attributes, after OpenTelemetry's GenAI
//! semantic conventions (`invoke_agent`, `chat {model}`,
//! `execute_tool {name}`) plus a `compile_context` span of the library's
//! own. No span carries message text unless [`TraceOptions::content`] asks
//! for it, and then only redacted.

pub mod genai;

use std::any::Any;
use std::rc::Rc;

/// The value of a span attribute.
#[derive(Debug, Clone, PartialEq)]
pub enum Attribute {
    /// A string.
    Text(String),
    /// An integer.
    Int(i64),
    /// A boolean.
    Bool(bool),
    /// A list of strings.
    Texts(Vec<String>),
}

impl From<&str> for Attribute {
    fn from(value: &str) -> Self {
        Attribute::Text(value.to_string())
    }
}

impl From<String> for Attribute {
    fn from(value: String) -> Self {
        Attribute::Text(value)
    }
}

impl From<u64> for Attribute {
    fn from(value: u64) -> Self {
        Attribute::Int(i64::try_from(value).unwrap_or(i64::MAX))
    }
}

impl From<usize> for Attribute {
    fn from(value: usize) -> Self {
        Attribute::Int(i64::try_from(value).unwrap_or(i64::MAX))
    }
}

impl From<bool> for Attribute {
    fn from(value: bool) -> Self {
        Attribute::Bool(value)
    }
}

/// A span's attributes, by name.
pub type Attributes = Vec<(&'static str, Attribute)>;

/// What a span stands for, as OpenTelemetry's `SpanKind` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    /// Work inside the process (a turn, a compile, a tool call).
    Internal,
    /// A call to a remote service (the model).
    Client,
}

/// A span a [`Tracer`] started. Its methods never fail: a tracer that
/// cannot record ignores what it is told.
pub trait Span {
    /// Adds or replaces attributes.
    fn set_attributes(&self, attributes: Attributes);
    /// Marks the span failed: `error_type` (the error's code) in the
    /// `error.type` attribute, `message` as its status.
    fn fail(&self, error_type: &str, message: &str);
    /// Ends the span (later calls are ignored).
    fn end(&self);
    /// The span as `Any`, for a tracer to find its own spans among parents.
    fn as_any(&self) -> &dyn Any;
}

/// Starts spans; implemented by a binding over its host's tracer.
pub trait Tracer {
    /// Starts a span named `name` under `parent` (the host's current span
    /// when `None`).
    fn start_span(
        &self,
        name: &str,
        kind: SpanKind,
        attributes: Attributes,
        parent: Option<&dyn Span>,
    ) -> Box<dyn Span>;
}

/// How a run traces: its tracer and whether spans carry message text.
#[derive(Clone)]
pub struct TraceOptions {
    /// Starts the run's spans.
    pub tracer: Rc<dyn Tracer>,
    /// Whether the model and tool spans carry the messages, the reply, the
    /// arguments and the results (redacted; `false` by default).
    pub content: bool,
    /// `gen_ai.provider.name` (`openai`, `anthropic`, `gcp.gemini`, ...);
    /// by default the run's format's provider, when it has one.
    pub provider: Option<String>,
    /// `gen_ai.agent.name`: the turn's span is `invoke_agent {name}`.
    pub agent_name: Option<String>,
}

impl TraceOptions {
    /// Traces through `tracer`, without message text.
    pub fn new(tracer: Rc<dyn Tracer>) -> Self {
        TraceOptions {
            tracer,
            content: false,
            provider: None,
            agent_name: None,
        }
    }
}
