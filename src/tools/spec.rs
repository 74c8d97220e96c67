//! The tools a request offers the model: their definitions in each
//! provider's shape, and what they cost in the provider's input tokens.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::error::{Error, ErrorCode, Result};
use crate::tokens::TokenCounter;
use crate::wire::ProviderFormat;

/// Input tokens Anthropic adds to a request that offers tools: the tool-use
/// system prompt it inserts (346 tokens for the Claude 4 models with
/// `tool_choice` `auto` or `none`, per its tool-use pricing table).
pub const ANTHROPIC_TOOL_PROMPT_TOKENS: u64 = 346;

/// A tool the model may call: passed to the model as `{ name, description,
/// parameters }`; `timeout_ms` is the runner's deadline for its calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    /// The tool's name, as the model calls it.
    pub name: String,
    /// What the tool does, for the model.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the tool's arguments (`{"type": "object"}` when absent).
    #[serde(default = "object_schema")]
    pub parameters: Value,
    /// How long a call may take (milliseconds); the run's default otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<f64>,
    /// Whether a run waits for a person's decision before running its
    /// calls (see [`crate::session::approvals`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub needs_approval: bool,
}

fn object_schema() -> Value {
    serde_json::json!({"type": "object"})
}

impl ToolSpec {
    /// A tool with a name, a description and an object schema.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters: object_schema(),
            timeout_ms: None,
            needs_approval: false,
        }
    }

    /// Reads tool definitions (`[{ name, description?, parameters?,
    /// timeoutMs?, needsApproval? }]`), checking names (non-empty, unique) and timeouts.
    pub fn parse_list(value: &Value) -> Result<Vec<ToolSpec>> {
        let invalid = |m: String| Error::new(ErrorCode::InvalidArgument, m);
        let specs: Vec<ToolSpec> = serde_json::from_value(value.clone()).map_err(|e| {
            invalid(format!(
                "tools must be an array of {{ name, description?, parameters?, timeoutMs?, needsApproval? }}: {e}"
            ))
        })?;
        let mut seen = std::collections::HashSet::new();
        for (i, s) in specs.iter().enumerate() {
            if s.name.is_empty() || !seen.insert(s.name.as_str()) {
                return Err(invalid(format!(
                    "tools[{i}].name must be a non-empty name used once"
                )));
            }
            if s.timeout_ms.is_some_and(|t| !(t.is_finite() && t > 0.0)) {
                return Err(invalid(format!(
                    "tools[{i}].timeoutMs must be a positive number"
                )));
            }
        }
        Ok(specs)
    }

    /// The definition the model sees, in `format`'s shape: OpenAI Chat
    /// Completions' `{ type: "function", function: { name, description,
    /// parameters } }`, OpenAI Responses' `{ type: "function", name,
    /// description, parameters }`, Anthropic's `{ name, description,
    /// input_schema }`, Gemini's function declaration `{ name, description,
    /// parametersJsonSchema }` (sent in `tools: [{ functionDeclarations }]`),
    /// otherwise `{ name, description, parameters }`.
    pub fn definition(&self, format: ProviderFormat) -> Value {
        match format {
            ProviderFormat::OpenAi => serde_json::json!({
                "type": "function",
                "function": {
                    "name": self.name,
                    "description": self.description,
                    "parameters": self.parameters,
                },
            }),
            ProviderFormat::Anthropic => serde_json::json!({
                "name": self.name,
                "description": self.description,
                "input_schema": self.parameters,
            }),
            // Responses enforces strict schemas unless told not to: a
            // schema of the host's need not meet strict mode's rules.
            ProviderFormat::OpenAiResponses => serde_json::json!({
                "type": "function",
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
                "strict": false,
            }),
            ProviderFormat::Gemini => serde_json::json!({
                "name": self.name,
                "description": self.description,
                "parametersJsonSchema": self.parameters,
            }),
            ProviderFormat::Plain | ProviderFormat::AiSdk => serde_json::json!({
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            }),
        }
    }
}

impl ToolSpec {
    /// Reads a tool definition leniently, for counting: `name`, an optional
    /// string `description`, and the schema from `parameters`,
    /// `input_schema`, `inputSchema` or `parametersJsonSchema` (an object
    /// schema when none is given). `None` without a string `name`.
    pub fn from_definition(definition: &Value) -> Option<ToolSpec> {
        let name = definition.get("name")?.as_str()?;
        let description = definition
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let parameters = [
            "parameters",
            "input_schema",
            "inputSchema",
            "parametersJsonSchema",
        ]
        .iter()
        .find_map(|k| definition.get(*k))
        .cloned()
        .unwrap_or_else(object_schema);
        Some(ToolSpec {
            name: name.to_string(),
            description: description.to_string(),
            parameters,
            timeout_ms: None,
            needs_approval: false,
        })
    }
}

/// Which tools the model may or must call, passed through to the
/// provider in its own shape ([`ToolChoice::for_format`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides.
    Auto,
    /// The model must call a tool.
    Required,
    /// The model must not call a tool.
    None,
    /// The model must call this tool.
    Tool(String),
}

impl ToolChoice {
    /// Reads `"auto"`, `"required"`, `"none"` or `{ "name": tool }`.
    pub fn from_json(value: &Value) -> Result<ToolChoice> {
        match value {
            Value::String(s) if s == "auto" => Ok(ToolChoice::Auto),
            Value::String(s) if s == "required" => Ok(ToolChoice::Required),
            Value::String(s) if s == "none" => Ok(ToolChoice::None),
            Value::Object(o) => match o.get("name").and_then(Value::as_str) {
                Some(name) if !name.is_empty() => Ok(ToolChoice::Tool(name.to_string())),
                _ => Err(bad_choice()),
            },
            _ => Err(bad_choice()),
        }
    }

    /// The choice in `format`'s shape: Chat Completions' `"auto"` /
    /// `"required"` / `"none"` / `{ type: "function", function: { name } }`,
    /// Responses' flat `{ type: "function", name }`, Anthropic's
    /// `{ type: "auto" | "any" | "none" | "tool", name? }`, Gemini's
    /// `toolConfig` `{ functionCallingConfig: { mode, allowedFunctionNames? } }`,
    /// the AI SDK's `"auto"` / `"required"` / `"none"` / `{ type: "tool",
    /// toolName }`.
    pub fn for_format(&self, format: ProviderFormat) -> Value {
        use ProviderFormat as F;
        let word = match self {
            ToolChoice::Auto => "auto",
            ToolChoice::Required => "required",
            ToolChoice::None => "none",
            ToolChoice::Tool(_) => "",
        };
        match (format, self) {
            (F::Anthropic, ToolChoice::Tool(name)) => json!({"type": "tool", "name": name}),
            (F::Anthropic, ToolChoice::Required) => json!({"type": "any"}),
            (F::Anthropic, _) => json!({ "type": word }),
            (F::Gemini, ToolChoice::Tool(name)) => json!({
                "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [name]}
            }),
            (F::Gemini, _) => {
                let mode = match self {
                    ToolChoice::Required => "ANY",
                    ToolChoice::None => "NONE",
                    _ => "AUTO",
                };
                json!({"functionCallingConfig": {"mode": mode}})
            }
            (F::OpenAi | F::Plain, ToolChoice::Tool(name)) => {
                json!({"type": "function", "function": {"name": name}})
            }
            (F::OpenAiResponses, ToolChoice::Tool(name)) => {
                json!({"type": "function", "name": name})
            }
            (F::AiSdk, ToolChoice::Tool(name)) => json!({"type": "tool", "toolName": name}),
            _ => json!(word),
        }
    }
}

fn bad_choice() -> Error {
    Error::new(
        ErrorCode::InvalidArgument,
        "toolChoice must be \"auto\", \"required\", \"none\" or { name: tool }",
    )
}

/// The request's tools field in `format`'s shape: an array of
/// [`ToolSpec::definition`]s, but Gemini's `[{ functionDeclarations }]` and
/// the AI SDK's object of tools by name. `Null` without tools.
pub fn request_tools(specs: &[ToolSpec], format: ProviderFormat) -> Value {
    if specs.is_empty() {
        return Value::Null;
    }
    let definitions = specs.iter().map(|s| s.definition(format));
    match format {
        ProviderFormat::Gemini => {
            json!([{ "functionDeclarations": definitions.collect::<Vec<_>>() }])
        }
        ProviderFormat::AiSdk => Value::Object(
            specs
                .iter()
                .map(|s| {
                    (
                        s.name.clone(),
                        json!({ "description": s.description, "inputSchema": s.parameters }),
                    )
                })
                .collect(),
        ),
        _ => Value::Array(definitions.collect()),
    }
}

/// The input tokens `specs` add to a request in `format`: `counter`'s count
/// of the tools field as JSON, plus Anthropic's tool-use system prompt
/// ([`ANTHROPIC_TOOL_PROMPT_TOKENS`]). Zero without tools.
pub fn request_tool_tokens(
    specs: &[ToolSpec],
    format: ProviderFormat,
    counter: &dyn TokenCounter,
) -> u64 {
    if specs.is_empty() {
        return 0;
    }
    let field = request_tools(specs, format).to_string();
    let prompt = if format == ProviderFormat::Anthropic {
        ANTHROPIC_TOOL_PROMPT_TOKENS
    } else {
        0
    };
    counter.count(&field) + prompt
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::DefaultTokenCounter;

    fn weather() -> ToolSpec {
        let mut spec = ToolSpec::new("get_weather", "The weather in a city");
        spec.parameters = json!({
            "type": "object",
            "properties": { "city": { "type": "string", "description": "The city" } },
            "required": ["city"],
        });
        spec
    }

    #[test]
    fn each_format_has_its_tools_field() {
        let specs = [weather()];
        let openai = request_tools(&specs, ProviderFormat::OpenAi);
        assert_eq!(openai[0]["function"]["name"], "get_weather");
        let gemini = request_tools(&specs, ProviderFormat::Gemini);
        assert_eq!(
            gemini[0]["functionDeclarations"][0]["parametersJsonSchema"]["required"][0],
            "city"
        );
        let ai = request_tools(&specs, ProviderFormat::AiSdk);
        assert_eq!(ai["get_weather"]["inputSchema"]["type"], "object");
        assert_eq!(request_tools(&[], ProviderFormat::OpenAi), Value::Null);
    }

    #[test]
    fn tools_cost_their_json_and_anthropic_its_prompt() {
        let counter = DefaultTokenCounter;
        let specs = [weather()];
        let json_tokens = counter.count(&request_tools(&specs, ProviderFormat::OpenAi).to_string());
        assert_eq!(
            request_tool_tokens(&specs, ProviderFormat::OpenAi, &counter),
            json_tokens
        );
        let anthropic = request_tool_tokens(&specs, ProviderFormat::Anthropic, &counter);
        assert!(anthropic > ANTHROPIC_TOOL_PROMPT_TOKENS);
        assert_eq!(
            request_tool_tokens(&[], ProviderFormat::Anthropic, &counter),
            0
        );
    }

    #[test]
    fn a_tool_choice_in_each_format() {
        let read = |v: Value| ToolChoice::from_json(&v).expect("choice");
        let one = read(json!({"name": "df"}));
        assert_eq!(
            one.for_format(ProviderFormat::OpenAi),
            json!({"type": "function", "function": {"name": "df"}})
        );
        assert_eq!(
            one.for_format(ProviderFormat::OpenAiResponses),
            json!({"type": "function", "name": "df"})
        );
        assert_eq!(
            one.for_format(ProviderFormat::Anthropic),
            json!({"type": "tool", "name": "df"})
        );
        assert_eq!(
            one.for_format(ProviderFormat::AiSdk),
            json!({"type": "tool", "toolName": "df"})
        );
        assert_eq!(
            one.for_format(ProviderFormat::Gemini),
            json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["df"]}})
        );
        let required = read(json!("required"));
        assert_eq!(
            required.for_format(ProviderFormat::OpenAi),
            json!("required")
        );
        assert_eq!(
            required.for_format(ProviderFormat::Anthropic),
            json!({"type": "any"})
        );
        assert_eq!(
            required.for_format(ProviderFormat::Gemini)["functionCallingConfig"]["mode"],
            "ANY"
        );
        assert_eq!(
            read(json!("none")).for_format(ProviderFormat::Anthropic),
            json!({"type": "none"})
        );
        assert_eq!(
            read(json!("auto")).for_format(ProviderFormat::AiSdk),
            json!("auto")
        );
        for bad in [
            json!("any"),
            json!({}),
            json!({"name": ""}),
            json!(3),
            json!(null),
        ] {
            assert_eq!(
                ToolChoice::from_json(&bad).expect_err("bad").code(),
                ErrorCode::InvalidArgument
            );
        }
    }

    #[test]
    fn definitions_are_read_leniently() {
        let spec = ToolSpec::from_definition(&json!({
            "name": "t", "input_schema": {"type": "object", "properties": {}}
        }))
        .expect("a named definition");
        assert_eq!(spec.parameters["properties"], json!({}));
        assert_eq!(spec.description, "");
        assert!(ToolSpec::from_definition(&json!({"description": "x"})).is_none());
        assert!(ToolSpec::from_definition(&json!({"name": 3})).is_none());
    }
}
