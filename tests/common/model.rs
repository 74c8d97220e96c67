//! A scripted language model for handler tests: answers in order (the last
//! one repeated), remembers every prompt, and can run a hook on each call.

use std::cell::RefCell;
use std::collections::VecDeque;

use async_trait::async_trait;
use context_compiler::llm::{Llm, LlmOptions};
use context_compiler::{Error, ErrorCode, Result};

type Hook = Box<dyn Fn(&str)>;

pub struct ScriptedModel {
    answers: RefCell<VecDeque<std::result::Result<String, String>>>,
    pub prompts: RefCell<Vec<(String, u64)>>,
    hook: RefCell<Option<Hook>>,
}

impl ScriptedModel {
    /// Answers `answers` in order; `Err` answers fail the call.
    pub fn new(answers: &[std::result::Result<&str, &str>]) -> ScriptedModel {
        ScriptedModel {
            answers: RefCell::new(
                answers
                    .iter()
                    .map(|a| a.map(str::to_string).map_err(str::to_string))
                    .collect(),
            ),
            prompts: RefCell::new(Vec::new()),
            hook: RefCell::new(None),
        }
    }

    /// Runs `hook` with each prompt, before answering.
    pub fn on_call(&self, hook: impl Fn(&str) + 'static) {
        *self.hook.borrow_mut() = Some(Box::new(hook));
    }

    /// The prompts asked so far.
    pub fn asked(&self) -> Vec<String> {
        self.prompts.borrow().iter().map(|p| p.0.clone()).collect()
    }
}

#[async_trait(?Send)]
impl Llm for ScriptedModel {
    async fn complete(&self, prompt: &str, options: LlmOptions) -> Result<String> {
        self.prompts
            .borrow_mut()
            .push((prompt.to_string(), options.max_tokens));
        if let Some(hook) = &*self.hook.borrow() {
            hook(prompt);
        }
        let answer = {
            let mut answers = self.answers.borrow_mut();
            if answers.len() > 1 {
                answers.pop_front()
            } else {
                answers.front().cloned()
            }
        };
        match answer {
            Some(Ok(a)) => Ok(a),
            Some(Err(m)) => Err(Error::new(ErrorCode::InvalidArgument, m)),
            None => Err(Error::new(ErrorCode::InvalidArgument, "no answer scripted")),
        }
    }
}
