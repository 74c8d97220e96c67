//! The language model the library calls for summaries, as a trait the host
//! implements (the JS binding wraps an `async (prompt, { maxTokens }) =>
//! string` function). The library holds no HTTP client and no provider.

use async_trait::async_trait;

use crate::error::Result;

/// Options of one completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LlmOptions {
    /// The most tokens the answer may have.
    pub max_tokens: u64,
}

/// A text completion model (single-threaded, no `Send` bound).
#[async_trait(?Send)]
pub trait Llm {
    /// Completes `prompt`.
    async fn complete(&self, prompt: &str, options: LlmOptions) -> Result<String>;
}
