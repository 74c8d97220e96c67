//! `ContextCompiler` for JS.

use js_sys::{Array, Reflect};
use wasm_bindgen::prelude::*;

use crate::js::types::*;

use crate::compiler::ContextCompiler as CoreCompiler;
use crate::error::{Error, ErrorCode};
use crate::js::budget::positive_budget;
use crate::js::convert::{option, string};
use crate::js::error::to_js_error;
use crate::js::processors::ProcessorEntry;
use crate::js::promise::spawn;
use crate::js::session::JsSession;
use crate::js::working_context::WorkingContext;

/// Runs processors in order and fits the result to the budget.
#[wasm_bindgen]
pub struct ContextCompiler {
    processors: Vec<ProcessorEntry>,
}

#[wasm_bindgen]
impl ContextCompiler {
    /// Options: `processors`, built-in or custom, run in order.
    #[wasm_bindgen(constructor)]
    pub fn new(
        options: Option<ContextCompilerOptionsArg>,
    ) -> std::result::Result<ContextCompiler, JsValue> {
        let list = option(&options, "processors", "options").map_err(to_js_error)?;
        let mut processors = Vec::new();
        if !list.is_undefined() && !list.is_null() {
            if !Array::is_array(&list) {
                return Err(to_js_error(Error::new(
                    ErrorCode::InvalidArgument,
                    "options.processors must be an array",
                )));
            }
            for (i, p) in Array::from(&list).iter().enumerate() {
                processors.push(
                    ProcessorEntry::from_js(&p, &format!("options.processors[{i}]"))
                        .map_err(to_js_error)?,
                );
            }
        }
        Ok(ContextCompiler { processors })
    }

    /// Appends a processor to the pipeline.
    #[wasm_bindgen(js_name = addProcessor)]
    pub fn add_processor(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Processor")] processor: JsValue,
    ) -> std::result::Result<(), JsValue> {
        self.processors
            .push(ProcessorEntry::from_js(&processor, "processor").map_err(to_js_error)?);
        Ok(())
    }

    /// The processors' names, in order.
    #[wasm_bindgen(getter, js_name = processorNames)]
    pub fn processor_names(&self) -> Vec<String> {
        self.processors.iter().map(ProcessorEntry::name).collect()
    }

    /// Compiles `session` under `budget` (a positive integer or a
    /// `TokenBudget`) and resolves to a `WorkingContext` that never exceeds
    /// it. Options: `systemPrompt`. On failure the session is unchanged.
    /// While a compile runs, `session.record` throws `SESSION_BUSY`.
    #[wasm_bindgen(unchecked_return_type = "Promise<WorkingContext>")]
    pub fn compile(
        &self,
        session: &JsSession,
        #[wasm_bindgen(unchecked_param_type = "number | TokenBudget")] budget: JsValue,
        options: Option<CompileOptionsArg>,
    ) -> js_sys::Promise {
        let prepared = (|| -> std::result::Result<(u64, String), JsValue> {
            let budget = if budget.is_object() {
                positive_budget(
                    &Reflect::get(&budget, &"maxTokens".into()).unwrap_or(JsValue::UNDEFINED),
                )?
            } else {
                positive_budget(&budget)?
            };
            let prompt = option(&options, "systemPrompt", "options").map_err(to_js_error)?;
            let prompt = if prompt.is_undefined() || prompt.is_null() {
                String::new()
            } else {
                string(&prompt, "options.systemPrompt").map_err(to_js_error)?
            };
            Ok((budget, prompt))
        })();
        let (budget, prompt) = match prepared {
            Ok(p) => p,
            Err(e) => return js_sys::Promise::reject(&e),
        };
        let session = session.inner.clone();
        let compiler =
            CoreCompiler::new(self.processors.iter().map(|p| p.bind(&session)).collect());
        // The shared borrow is held across the pipeline's awaits on purpose:
        // every other access to a session goes through `try_borrow*`, so a
        // `record` during the compile is a SESSION_BUSY error, never a panic.
        #[allow(clippy::await_holding_refcell_ref)]
        spawn(async move {
            let (ctx, writes) = {
                let view = session.try_borrow().map_err(|_| {
                    Error::new(ErrorCode::SessionBusy, "the session is being written to")
                })?;
                compiler.compile_view(&view, budget, &prompt).await?
            };
            let mut s = session.try_borrow_mut().map_err(|_| {
                Error::new(
                    ErrorCode::SessionBusy,
                    "the session is in use by another compile",
                )
            })?;
            writes.apply(&mut s)?;
            Ok(WorkingContext { inner: ctx }.into())
        })
    }
}
