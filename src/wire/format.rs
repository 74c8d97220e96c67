//! The request formats a context renders in: a name each, nothing else, so
//! that what depends on the format (media pricing and limits, the renderer,
//! the checker) depends on this file alone.

use crate::error::Result;

/// The message shapes [`crate::WorkingContext::to_provider_messages`] renders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderFormat {
    /// `{ role, content }[]` (the default).
    Plain,
    /// OpenAI Chat Completions: assistant `tool_calls` and `tool` messages.
    OpenAi,
    /// Anthropic Messages: `{ system, messages }` with `tool_use` /
    /// `tool_result` blocks and `cache_control` at the ends of the stable
    /// zones (at most four breakpoints).
    Anthropic,
    /// Vercel AI SDK `{ instructions, messages }`: the leading zones as
    /// `SystemModelMessage[]` with cache `providerOptions`, the conversation
    /// as `ModelMessage[]` with `tool-call` / `tool-result` parts.
    AiSdk,
    /// OpenAI Responses `{ instructions, input }`: the leading zones as the
    /// instructions, the conversation as `message`, `function_call` and
    /// `function_call_output` items.
    OpenAiResponses,
    /// Gemini `{ systemInstruction, contents }`: the leading zones as the
    /// system instruction's parts, the conversation as `user` / `model`
    /// contents with `functionCall` / `functionResponse` parts.
    Gemini,
}

impl ProviderFormat {
    /// Every format, in the order of their names in errors.
    pub const ALL: [ProviderFormat; 6] = [
        ProviderFormat::Plain,
        ProviderFormat::OpenAi,
        ProviderFormat::OpenAiResponses,
        ProviderFormat::Anthropic,
        ProviderFormat::Gemini,
        ProviderFormat::AiSdk,
    ];

    /// Parses `plain`, `openai`, `openai-responses`, `anthropic`, `gemini`
    /// or `ai-sdk`.
    pub fn parse(name: &str) -> Result<ProviderFormat> {
        crate::error::one_of(&ProviderFormat::ALL, ProviderFormat::as_str, name, "format")
    }

    /// The format's name.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderFormat::Plain => "plain",
            ProviderFormat::OpenAi => "openai",
            ProviderFormat::OpenAiResponses => "openai-responses",
            ProviderFormat::Anthropic => "anthropic",
            ProviderFormat::Gemini => "gemini",
            ProviderFormat::AiSdk => "ai-sdk",
        }
    }
}
