//! The MCP tool `orchestrate_compiled`: its definition, its
//! arguments, and its results as MCP `CallToolResult`s (failures as data,
//! `isError: true`, as MCP asks of tool errors).

use serde_json::{json, Value};

use crate::error::{Error, ErrorCode, Result};
use crate::runner::RunResult;

/// The tool's name.
pub const ORCHESTRATE_COMPILED: &str = "orchestrate_compiled";

/// The system prompt when the caller gives none .
pub const DEFAULT_SYSTEM_PROMPT: &str = "You are a helpful AI assistant.";

/// The tool's MCP definition: its `inputSchema` (`task`, `budget`,
/// optional `system_prompt`), and an `outputSchema` for the structured result.
pub fn tool_definition() -> Value {
    json!({
        "name": ORCHESTRATE_COMPILED,
        "description": "Run the agent on a task with context compilation under a token budget",
        "inputSchema": {
            "type": "object",
            "properties": {
                "task": {"type": "string", "description": "Task to execute"},
                "budget": {"type": "integer", "minimum": 1, "description": "Token budget for context"},
                "system_prompt": {"type": "string", "description": "System prompt (optional)"}
            },
            "required": ["task", "budget"]
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "session_id": {"type": "string"},
                "budget_used": {"type": "integer"},
                "within_budget": {"type": "boolean"},
                "blocked": {"type": "boolean"},
                "stop_reason": {"type": "string", "enum": ["answered", "max_steps", "blocked", "approval"]},
                "steps": {"type": "integer"},
                "artifacts": {"type": "array", "items": {"type": "string"}},
                "pending": {
                    "type": "array",
                    "description": "The calls that wait for a person's decision (stop_reason approval)",
                    "items": {
                        "type": "object",
                        "properties": {
                            "call_id": {"type": "string"},
                            "name": {"type": "string"},
                            "arguments": {"type": "object"}
                        },
                        "required": ["call_id", "name", "arguments"]
                    }
                }
            },
            "required": ["session_id", "budget_used", "within_budget", "blocked", "stop_reason", "steps", "artifacts"]
        }
    })
}

/// The tool's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrchestrateArguments {
    /// The task: the run's user input.
    pub task: String,
    /// The token budget of every compile.
    pub budget: u64,
    /// The system prompt ([`DEFAULT_SYSTEM_PROMPT`] when absent).
    pub system_prompt: String,
}

/// Reads the arguments; anything off is [`ErrorCode::InvalidArgument`]
/// naming the field.
pub fn parse_arguments(arguments: &Value) -> Result<OrchestrateArguments> {
    let invalid = |m: &str| Error::new(ErrorCode::InvalidArgument, m.to_string());
    let object = arguments.as_object().ok_or_else(|| {
        invalid("the arguments must be an object { task, budget, system_prompt? }")
    })?;
    let task = object
        .get("task")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("task must be a string"))?;
    let budget = object
        .get("budget")
        .and_then(Value::as_u64)
        .filter(|b| *b > 0)
        .ok_or_else(|| invalid("budget must be a positive integer"))?;
    let system_prompt = match object.get("system_prompt") {
        None | Some(Value::Null) => DEFAULT_SYSTEM_PROMPT.to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(invalid("system_prompt must be a string")),
    };
    Ok(OrchestrateArguments {
        task: task.to_string(),
        budget,
        system_prompt,
    })
}

/// A run's `CallToolResult`: the answer as text content, and its
/// `session_id`, `budget_used`, `within_budget` with the artifacts the run
/// externalised as structured content. A run that stopped for approval
/// says which calls wait, in the text and as `pending` (arguments
/// redacted).
pub fn tool_result(run: &RunResult) -> Value {
    let artifacts: Vec<&str> = run
        .steps
        .iter()
        .flat_map(|s| &s.tool_events)
        .filter_map(|e| e.artifact.as_ref().map(|a| a.artifact_id.as_str()))
        .collect();
    let stop_reason = serde_json::to_value(run.stop_reason).unwrap_or(Value::Null);
    let pending: Vec<Value> = run
        .pending
        .iter()
        .map(|p| json!({"call_id": p.call_id, "name": p.name, "arguments": p.arguments}))
        .collect();
    let mut text = run.result.clone();
    if !run.pending.is_empty() {
        let calls: Vec<String> = run
            .pending
            .iter()
            .map(|p| format!("{} ({})", p.name, p.call_id))
            .collect();
        let waiting = format!(
            "{} tool call(s) wait for a person's decision: {}; resume session {} with approvals",
            calls.len(),
            calls.join(", "),
            run.session_id
        );
        text = [text.trim(), waiting.as_str()]
            .iter()
            .filter(|t| !t.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join("\n\n");
    }
    json!({
        "content": [{"type": "text", "text": text}],
        "structuredContent": {
            "session_id": run.session_id,
            "budget_used": run.budget_used,
            "within_budget": run.within_budget,
            "blocked": run.blocked,
            "stop_reason": stop_reason,
            "steps": run.steps.len(),
            "artifacts": artifacts,
            "pending": pending,
        },
        "isError": false,
    })
}

/// A failed run's `CallToolResult`: `isError`, and the code and message as text.
pub fn tool_error(error: &Error) -> Value {
    json!({
        "content": [{"type": "text", "text": format!("{}: {}", error.code(), error.message())}],
        "isError": true,
    })
}
