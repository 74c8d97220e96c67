//! The PerceptionAligner: parse, validate, redact, summarise a tool output.

use std::cell::RefCell;
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::clock::Clock;
use crate::normalize::redact::{redact, redact_json, Finding, Redaction};
use crate::normalize::schemas::{SchemaError, SchemaRegistry};
use crate::normalize::sliced::{redact_in_slices, SLICE_BYTES};
use crate::normalize::summary::{summarize_json, summarize_text};

/// Maximum characters of [`NormalizedOutput::summary_concise`].
pub const CONCISE_MAX_CHARS: usize = 200;
/// Maximum characters of [`NormalizedOutput::summary_detailed`].
pub const DETAILED_MAX_CHARS: usize = 2000;

/// A tool output made safe and short for a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NormalizedOutput {
    /// Whether the output is valid against the tool's schema (tools without
    /// one are valid).
    pub valid: bool,
    /// The parsed JSON, or the text as a string, with secrets redacted.
    pub data: Value,
    /// Whether the output parsed as JSON.
    pub is_json: bool,
    /// At most 200 characters, from the redacted output.
    pub summary_concise: String,
    /// At most 2,000 characters, from the redacted output.
    pub summary_detailed: String,
    /// Every secret removed (rule, JSON path for JSON, span).
    pub redacted_fields: Vec<Finding>,
    /// Every schema violation (instance path and message).
    pub validation_errors: Vec<SchemaError>,
}

/// Normalises raw tool outputs: JSON parsing (text stays text), schema
/// validation, secret redaction, then summaries made from the redacted form
/// only, so no secret reaches a summary.
#[derive(Clone, Default)]
pub struct PerceptionAligner {
    registry: Rc<RefCell<SchemaRegistry>>,
}

impl PerceptionAligner {
    /// An aligner validating against `registry` (shared: schemas registered
    /// later apply too).
    pub fn new(registry: Rc<RefCell<SchemaRegistry>>) -> Self {
        PerceptionAligner { registry }
    }

    /// The registry this aligner validates against.
    pub fn registry(&self) -> &Rc<RefCell<SchemaRegistry>> {
        &self.registry
    }

    /// Normalises bytes; invalid UTF-8 is replaced (U+FFFD), never an error.
    pub fn normalize_bytes(&self, tool: &str, raw: &[u8]) -> NormalizedOutput {
        self.normalize(tool, &String::from_utf8_lossy(raw))
    }

    /// Normalises a raw output. JSON nested deeper than the parser allows is
    /// treated as text.
    pub fn normalize(&self, tool: &str, raw: &str) -> NormalizedOutput {
        let parsed: Option<Value> = serde_json::from_str(raw).ok();
        let (valid, errors) = self.validation(tool, parsed.as_ref());
        match parsed {
            Some(mut value) => {
                let findings = redact_json(&mut value);
                json_output(value, findings, valid, errors)
            }
            None => text_output(redact(raw), valid, errors),
        }
    }

    /// [`PerceptionAligner::normalize`] in steps, giving the host's event
    /// loop a turn (through `clock`) between them when `raw` is large:
    /// parsing, validation, redaction (a text in slices, see
    /// [`redact_in_slices`]), so timers and abort signals fire meanwhile.
    /// The same result.
    pub async fn normalize_in_steps(
        &self,
        tool: &str,
        raw: &str,
        clock: &dyn Clock,
    ) -> NormalizedOutput {
        if raw.len() <= SLICE_BYTES {
            return self.normalize(tool, raw);
        }
        clock.sleep(0.0).await;
        let parsed: Option<Value> = serde_json::from_str(raw).ok();
        clock.sleep(0.0).await;
        let (valid, errors) = self.validation(tool, parsed.as_ref());
        clock.sleep(0.0).await;
        match parsed {
            Some(mut value) => {
                let findings = redact_json(&mut value);
                clock.sleep(0.0).await;
                json_output(value, findings, valid, errors)
            }
            None => {
                let r = redact_in_slices(raw, clock).await;
                clock.sleep(0.0).await;
                text_output(r, valid, errors)
            }
        }
    }

    /// Whether the output (`parsed`, or text when `None`) is valid against
    /// `tool`'s schema, and why not.
    fn validation(&self, tool: &str, parsed: Option<&Value>) -> (bool, Vec<SchemaError>) {
        let registry = self.registry.borrow();
        match parsed {
            Some(value) => {
                // An MCP CallToolResult is validated by its structured content.
                let target = value.get("structuredContent").unwrap_or(value);
                let r = registry.validate(tool, target);
                (r.valid, r.errors)
            }
            None if registry.get(tool).is_some() => (
                false,
                vec![SchemaError {
                    instance_path: String::new(),
                    schema_path: String::new(),
                    message: format!(
                        "tool '{tool}' has an output schema but its output is not JSON"
                    ),
                }],
            ),
            None => (true, Vec::new()),
        }
    }
}

/// The normalised form of a redacted JSON output.
fn json_output(
    value: Value,
    redacted_fields: Vec<Finding>,
    valid: bool,
    validation_errors: Vec<SchemaError>,
) -> NormalizedOutput {
    NormalizedOutput {
        valid,
        summary_concise: summarize_json(&value, CONCISE_MAX_CHARS),
        summary_detailed: summarize_json(&value, DETAILED_MAX_CHARS),
        data: value,
        is_json: true,
        redacted_fields,
        validation_errors,
    }
}

/// The normalised form of a redacted text output.
fn text_output(r: Redaction, valid: bool, validation_errors: Vec<SchemaError>) -> NormalizedOutput {
    NormalizedOutput {
        valid,
        summary_concise: summarize_text(&r.text, CONCISE_MAX_CHARS),
        summary_detailed: summarize_text(&r.text, DETAILED_MAX_CHARS),
        data: Value::String(r.text),
        is_json: false,
        redacted_fields: r.findings,
        validation_errors,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn aligner() -> PerceptionAligner {
        let mut reg = SchemaRegistry::new();
        reg.register("calc", json!({"type": "object", "properties": {"result": {"type": "number"}}, "required": ["result"]}))
            .unwrap();
        PerceptionAligner::new(Rc::new(RefCell::new(reg)))
    }

    // The test_normalizer cases.
    #[test]
    fn normalize_plain_text() {
        let r = aligner().normalize("echo", "hello world");
        assert!(r.valid);
        assert_eq!(r.data, json!("hello world"));
        assert_eq!(r.summary_concise, "hello world");
        assert!(!r.is_json);
    }

    #[test]
    fn normalize_json_against_its_schema() {
        let a = aligner();
        assert!(a.normalize("calc", r#"{"result": 42}"#).valid);
        let r = a.normalize("calc", r#"{"wrong": "field"}"#);
        assert!(!r.valid);
        assert!(!r.validation_errors.is_empty());
    }

    #[test]
    fn redacts_secrets_in_text() {
        let r = aligner().normalize(
            "env",
            "API_KEY=sk-abcdefghijklmnopqrstuvwxyz123456 and password=hunter22",
        );
        assert!(!r.summary_concise.contains("sk-abcdef"));
        assert!(!r.summary_concise.contains("hunter22"));
        assert_eq!(r.redacted_fields.len(), 2);
    }

    // The case the seed itself fails: secrets inside JSON values.
    #[test]
    fn redacts_api_key_and_bearer_inside_json() {
        let raw = r#"{"config": {"api_key": "sk-live-1234567890abcdef", "headers": {"Authorization": "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdefghijklmnop"}}}"#;
        let r = aligner().normalize("cfg", raw);
        let text = serde_json::to_string(&r.data).unwrap();
        assert!(!text.contains("sk-live-1234567890abcdef"));
        assert!(!text.contains("eyJhbGciOiJIUzI1NiJ9"));
        assert!(
            !r.summary_detailed.contains("sk-live") && !r.summary_detailed.contains("eyJhbGci")
        );
        assert!(text.contains("\"api_key\""), "keys are kept");
    }

    #[test]
    fn mcp_structured_content_is_what_is_validated() {
        let a = aligner();
        let ok = json!({"content": [{"type": "text", "text": "42"}], "structuredContent": {"result": 42}});
        assert!(a.normalize("calc", &ok.to_string()).valid);
        let bad = json!({"content": [], "structuredContent": {"result": "no"}});
        let r = a.normalize("calc", &bad.to_string());
        assert_eq!(r.validation_errors[0].instance_path, "/result");
    }

    #[test]
    fn text_from_a_tool_with_a_schema_is_invalid() {
        let r = aligner().normalize("calc", "not json");
        assert!(!r.valid);
        assert!(r.validation_errors[0].message.contains("not JSON"));
    }

    #[test]
    fn awkward_outputs_never_panic() {
        let a = aligner();
        let deep = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
        let r = a.normalize("deep", &deep);
        assert!(
            !r.is_json,
            "deeper than the parser's limit: treated as text"
        );
        assert!(r.summary_concise.chars().count() <= CONCISE_MAX_CHARS);
        let r = a.normalize_bytes("bin", &[0xff, 0xfe, b'o', b'k']);
        assert!(r.summary_concise.contains('\u{fffd}'));
        for top in ["42", "\"str\"", "[1,2,3]", "null", "true"] {
            let r = a.normalize("scalar", top);
            assert!(r.is_json && r.valid);
            assert!(!r.summary_concise.is_empty());
        }
        let big = "line of log output with status=200\n".repeat(1_500_000);
        assert!(big.len() >= 50_000_000);
        let r = a.normalize("big", &big);
        assert!(r.summary_concise.chars().count() <= CONCISE_MAX_CHARS);
        assert!(r.summary_detailed.chars().count() <= DETAILED_MAX_CHARS);
    }
}
