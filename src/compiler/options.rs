//! What a compile is given besides the session and the budget.

use serde_json::Value;

use crate::error::{Error, ErrorCode, Result};
use crate::tokens::TokenCounter;
use crate::tools::{request_tool_tokens, ToolSpec};
use crate::working_context::{Layout, ProviderFormat, WorkingContext};
use crate::zones;

/// The system prompt and, for the zoned layout, the SYSTEM zone's policies,
/// tool definitions and user preferences, the PERSISTENT zone's goal and
/// state digest, and the RECENT zone's task state. The single-system layout uses the
/// system prompt only.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompileOptions {
    /// The system prompt.
    pub system_prompt: String,
    /// Active policies (`## Policies`).
    pub policies: Vec<String>,
    /// Tool definitions, each with a string `name` (`## Available Tools`).
    pub tool_definitions: Vec<Value>,
    /// User preferences, an object (`## User Preferences`).
    pub user_preferences: Option<Value>,
    /// The goal: in PERSISTENT, and restated last in RECENT.
    pub goal: Option<String>,
    /// A digest of the agent's state, an object (`## Brain State`).
    pub state_digest: Option<Value>,
    /// The current task state (`## Current Task`, in RECENT).
    pub task_state: Option<String>,
    /// The tools the request offers beside the messages (its `tools`
    /// field): counted in SYSTEM as `format` serialises them, in either
    /// layout. When empty, `tool_definitions` are counted instead.
    pub tools: Vec<ToolSpec>,
    /// The provider format the request is sent in, for counting the tools
    /// (`None`: as `{ name, description, parameters }`).
    pub format: Option<ProviderFormat>,
    /// The model the request goes to: images and files are counted by its
    /// provider's rule (see [`crate::media::cost`]).
    pub model: Option<String>,
    /// Tokens of the budget kept for the reply (default 0).
    pub reserve_output: u64,
    /// The share of the budget held back once recorded usage corrects the
    /// count (`None`: [`super::DEFAULT_USAGE_MARGIN`]).
    pub usage_margin: Option<f64>,
}

impl CompileOptions {
    /// Options with only a system prompt.
    pub fn new(system_prompt: impl Into<String>) -> Self {
        CompileOptions {
            system_prompt: system_prompt.into(),
            ..CompileOptions::default()
        }
    }

    /// Checks the shapes: tools with names, preferences and digest objects.
    pub fn validate(&self) -> Result<()> {
        zones::tool_names(&self.tool_definitions)?;
        for (what, v) in [
            ("userPreferences", &self.user_preferences),
            ("stateDigest", &self.state_digest),
        ] {
            if v.as_ref().is_some_and(|v| !v.is_object()) {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    format!("{what} must be an object"),
                ));
            }
        }
        Ok(())
    }

    /// The input tokens of the tools the request offers: `tools`, or else
    /// the tool definitions, as the format serialises them.
    pub fn tool_tokens(&self, counter: &dyn TokenCounter) -> u64 {
        let format = self.format.unwrap_or(ProviderFormat::Plain);
        if !self.tools.is_empty() {
            return request_tool_tokens(&self.tools, format, counter);
        }
        let specs: Vec<ToolSpec> = self
            .tool_definitions
            .iter()
            .filter_map(ToolSpec::from_definition)
            .collect();
        request_tool_tokens(&specs, format, counter)
    }

    /// The empty context a compile starts from.
    pub(crate) fn context(&self, budget: u64, layout: Layout) -> WorkingContext {
        let mut ctx = WorkingContext::new(self.system_prompt.clone(), budget);
        ctx.layout = layout;
        ctx.media_pricing = crate::media::cost::MediaPricing {
            format: self.format,
            model: self.model.clone(),
        };
        if layout == Layout::Zoned {
            ctx.policies = self.policies.clone();
            ctx.tool_definitions = self.tool_definitions.clone();
            ctx.user_preferences = self.user_preferences.clone();
            ctx.goal = self.goal.clone().filter(|g| !g.is_empty());
            ctx.state_digest = self.state_digest.clone();
            ctx.task_state = self.task_state.clone().filter(|t| !t.is_empty());
        }
        ctx
    }
}
