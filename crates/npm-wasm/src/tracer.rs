//! An OpenTelemetry `Tracer` as the core's [`Tracer`]: spans started with
//! `tracer.startSpan(name, { kind, attributes }, context)`, a child's
//! context made by the host (`traceContext(span)` in `js/tracing.js`), so
//! the package imports nothing of OpenTelemetry. A tracer or span that
//! throws is ignored: tracing never fails a compile or a run.

use std::any::Any;

use js_sys::{Array, Function, Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler::telemetry::{Attribute, Attributes, Span, SpanKind, Tracer};

#[wasm_bindgen]
extern "C" {
    /// An OpenTelemetry `Context` holding `span` as its span.
    #[wasm_bindgen(method, catch, js_name = traceContext)]
    fn trace_context(this: &TraceHost, span: &JsValue) -> std::result::Result<JsValue, JsValue>;

    /// The host object `js/instance.js` installs, as the tracer sees it.
    type TraceHost;
}

/// A JS tracer: an object with `startSpan`.
pub(crate) struct JsTracer {
    tracer: JsValue,
    start: Function,
}

impl JsTracer {
    /// `value` as a tracer, or `None` when it is `undefined` or `null`;
    /// `INVALID_ARGUMENT` when it has no `startSpan`.
    pub(crate) fn from_option(value: &JsValue, what: &str) -> Result<Option<JsTracer>> {
        if value.is_undefined() || value.is_null() {
            return Ok(None);
        }
        let start = Reflect::get(value, &"startSpan".into())
            .ok()
            .and_then(|f| f.dyn_into::<Function>().ok())
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::InvalidArgument,
                    format!("{what} must be an OpenTelemetry Tracer (an object with startSpan)"),
                )
            })?;
        Ok(Some(JsTracer {
            tracer: value.clone(),
            start,
        }))
    }
}

fn attributes_object(attributes: Attributes) -> Object {
    let object = Object::new();
    for (key, value) in attributes {
        let value = match value {
            Attribute::Text(text) => JsValue::from_str(&text),
            Attribute::Int(n) => JsValue::from_f64(n as f64),
            Attribute::Bool(b) => JsValue::from_bool(b),
            Attribute::Texts(texts) => texts
                .iter()
                .map(|t| JsValue::from_str(t))
                .collect::<Array>()
                .into(),
        };
        let _ = Reflect::set(&object, &key.into(), &value);
    }
    object
}

impl Tracer for JsTracer {
    fn start_span(
        &self,
        name: &str,
        kind: SpanKind,
        attributes: Attributes,
        parent: Option<&dyn Span>,
    ) -> Box<dyn Span> {
        let options = Object::new();
        // OpenTelemetry's SpanKind: INTERNAL 0, CLIENT 2.
        let kind = match kind {
            SpanKind::Internal => 0.0,
            SpanKind::Client => 2.0,
        };
        let _ = Reflect::set(&options, &"kind".into(), &kind.into());
        let _ = Reflect::set(
            &options,
            &"attributes".into(),
            &attributes_object(attributes),
        );
        let context = parent
            .and_then(|p| p.as_any().downcast_ref::<JsSpan>())
            .and_then(|p| {
                context_compiler_js::fatal::with_host_as(|host: &TraceHost| {
                    host.trace_context(&p.span).ok()
                })
                .flatten()
            })
            .unwrap_or(JsValue::UNDEFINED);
        match self
            .start
            .call3(&self.tracer, &name.into(), &options, &context)
        {
            Ok(span) if span.is_object() => Box::new(JsSpan { span }),
            _ => Box::new(JsSpan {
                span: JsValue::UNDEFINED,
            }),
        }
    }
}

/// A span the JS tracer started (`undefined` when it started none).
struct JsSpan {
    span: JsValue,
}

impl JsSpan {
    /// Calls the span's method `name` with `args`, ignoring what it throws.
    fn call(&self, name: &str, args: &[JsValue]) {
        if !self.span.is_object() {
            return;
        }
        let Some(method) = Reflect::get(&self.span, &name.into())
            .ok()
            .and_then(|f| f.dyn_into::<Function>().ok())
        else {
            return;
        };
        let args: Array = args.iter().collect();
        let _ = method.apply(&self.span, &args);
    }
}

impl Span for JsSpan {
    fn set_attributes(&self, attributes: Attributes) {
        self.call("setAttributes", &[attributes_object(attributes).into()]);
    }

    fn fail(&self, error_type: &str, message: &str) {
        self.call("setAttribute", &["error.type".into(), error_type.into()]);
        let status = Object::new();
        // OpenTelemetry's SpanStatusCode.ERROR.
        let _ = Reflect::set(&status, &"code".into(), &2.0.into());
        let _ = Reflect::set(&status, &"message".into(), &message.into());
        self.call("setStatus", &[status.into()]);
    }

    fn end(&self) {
        self.call("end", &[]);
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
