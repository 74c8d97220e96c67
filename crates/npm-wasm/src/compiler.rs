//! `ContextCompiler` for JS.

use std::cell::RefCell;
use std::rc::Rc;

use context_compiler_js::error::{JsResult, Thrown};
use wasm_bindgen::prelude::*;

use crate::types::*;

use crate::context_window::string_option;
use crate::processors::{budget_arg, ProcessorEntry};
use crate::session::session_arg;
use crate::working_context::WorkingContext;
use context_compiler::compiler::{CompileOptions, ContextCompiler as CoreCompiler};
use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler_js::convert::{argument_items, count, js_to_json, option, typed_option};
use context_compiler_js::error::to_js_error;
use context_compiler_js::promise::spawn;
use context_compiler_js::registry::Registration;

use crate::artifact_store_arg::artifact_store_arg;
use crate::registry;
use crate::render_memo::RenderMemo;
use crate::tracer::JsTracer;
use context_compiler::artifacts::ArtifactStore;
use context_compiler::runner::ToolSpec;
use context_compiler::session::Session;
use context_compiler::telemetry::Tracer;
use context_compiler::working_context::PrefixTracker;
use context_compiler::working_context::{Layout, ProviderFormat};

/// What a JS `ContextCompiler` holds: its processors and layout, shared
/// with the runs that name it.
pub(crate) struct CompilerSpec {
    processors: Vec<ProcessorEntry>,
    layout: Layout,
    /// Where compiles read the bytes of the images and files they keep.
    media_store: Option<Rc<dyn ArtifactStore>>,
    /// Each session's previous compile by this compiler (`ctx.cache`).
    prefix: Rc<PrefixTracker>,
    /// Each session's last rendering by `toMessages`, shared with the next.
    renderings: Rc<RenderMemo>,
    /// Traces each compile (`compile_context` spans).
    tracer: Option<Rc<dyn Tracer>>,
}

impl CompilerSpec {
    /// The core compiler for compiles of `session` (JS processors bound to
    /// it), reading media from its own store, else from `fallback` (a run's
    /// artifact store).
    pub(crate) fn bind(
        &self,
        session: &Rc<RefCell<Session>>,
        fallback: Option<&Rc<dyn ArtifactStore>>,
    ) -> CoreCompiler {
        let compiler = CoreCompiler::with_layout(
            self.processors.iter().map(|p| p.bind(session)).collect(),
            self.layout,
        )
        .with_prefix_tracker(self.prefix.clone());
        let compiler = match &self.tracer {
            Some(tracer) => compiler.with_tracer(tracer.clone()),
            None => compiler,
        };
        match self.media_store.as_ref().or(fallback) {
            Some(store) => compiler.with_media_store(store.clone()),
            None => compiler,
        }
    }
}

/// Runs processors in order and fits the result to the budget.
#[wasm_bindgen]
pub struct ContextCompiler {
    spec: Rc<RefCell<CompilerSpec>>,
    registration: Registration,
}

fn layout_option(value: &JsValue) -> Result<Layout> {
    match value.as_string().as_deref() {
        None if value.is_undefined() || value.is_null() => Ok(Layout::SingleSystem),
        Some("single-system") => Ok(Layout::SingleSystem),
        Some("zoned") => Ok(Layout::Zoned),
        _ => Err(Error::new(
            ErrorCode::InvalidArgument,
            "options.layout must be \"single-system\" or \"zoned\"",
        )),
    }
}

/// Reads `compile`'s options object; a given `system_prompt` is used
/// instead of `options.systemPrompt`, which is then not read. The model's
/// name is read from `model_key` (`model` for a compile, `modelName` for a
/// run, whose `model` is the model itself).
pub(crate) fn compile_options<T: AsRef<JsValue>>(
    options: &Option<T>,
    system_prompt: Option<String>,
    model_key: &str,
) -> Result<CompileOptions> {
    let get = |key: &str| option(options, key, "options");
    let json = |key: &str| -> Result<Option<serde_json::Value>> {
        let v = get(key)?;
        if v.is_undefined() || v.is_null() {
            Ok(None)
        } else {
            js_to_json(&v, &format!("options.{key}")).map(Some)
        }
    };
    let policies = match json("policies")? {
        None => Vec::new(),
        Some(v) => serde_json::from_value(v).map_err(|_| {
            Error::new(
                ErrorCode::InvalidArgument,
                "options.policies must be an array of strings",
            )
        })?,
    };
    let tool_definitions = match json("toolDefinitions")? {
        None => Vec::new(),
        Some(serde_json::Value::Array(a)) => a,
        Some(_) => {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "options.toolDefinitions must be an array of objects with a name",
            ))
        }
    };
    let tools = match json("tools")? {
        None => Vec::new(),
        Some(v) => ToolSpec::parse_list(&v)?,
    };
    let format = match string_option(&get("format")?, "options.format")? {
        None => None,
        Some(name) => Some(ProviderFormat::parse(&name)?),
    };
    let reserve_output = count(
        &get("reserveOutput")?,
        "options.reserveOutput",
        ErrorCode::InvalidBudget,
    )?
    .unwrap_or(0);
    let usage_margin = typed_option(
        options,
        "usageMargin",
        None,
        |v| v.as_f64().filter(|m| (0.0..1.0).contains(m)).map(Some),
        "a number at least 0 and below 1",
    )?;
    let options = CompileOptions {
        tools,
        format,
        model: string_option(&get(model_key)?, &format!("options.{model_key}"))?,
        reserve_output,
        usage_margin,
        system_prompt: match system_prompt {
            Some(prompt) => prompt,
            None => {
                string_option(&get("systemPrompt")?, "options.systemPrompt")?.unwrap_or_default()
            }
        },
        policies,
        tool_definitions,
        user_preferences: json("userPreferences")?,
        goal: string_option(&get("goal")?, "options.goal")?,
        state_digest: json("stateDigest")?,
        task_state: string_option(&get("taskState")?, "options.taskState")?,
    };
    options.validate()?;
    Ok(options)
}

#[wasm_bindgen]
impl ContextCompiler {
    /// Options: `processors`, built-in or custom, run in order; `layout`:
    /// `"single-system"` (default: one system message holding everything,
    /// then the conversation) or `"zoned"` (SYSTEM / PERSISTENT / WORKING /
    /// RECENT with a stable prefix and paired tool messages; recommended);
    /// `tracer`: an OpenTelemetry `Tracer` tracing each compile.
    #[wasm_bindgen(constructor)]
    pub fn new(options: Option<ContextCompilerOptionsArg>) -> JsResult<ContextCompiler> {
        let layout = layout_option(&option(&options, "layout", "options")?)?;
        let list = option(&options, "processors", "options")?;
        let mut processors = Vec::new();
        if !list.is_undefined() && !list.is_null() {
            let Some(items) = argument_items(&list, "options.processors")? else {
                return Err(Thrown::from(Error::new(
                    ErrorCode::InvalidArgument,
                    "options.processors must be an array",
                )));
            };
            for (i, p) in items.iter().enumerate() {
                processors.push(ProcessorEntry::from_js(
                    &p,
                    &format!("options.processors[{i}]"),
                )?);
            }
        }
        let store = option(&options, "mediaStore", "options")?;
        let media_store = if store.is_undefined() || store.is_null() {
            None
        } else {
            Some(artifact_store_arg(&store, "options.mediaStore")?)
        };
        let spec = Rc::new(RefCell::new(CompilerSpec {
            processors,
            layout,
            media_store,
            prefix: Rc::default(),
            renderings: Rc::default(),
            tracer: JsTracer::from_option(
                &option(&options, "tracer", "options")?,
                "options.tracer",
            )?
            .map(|t| Rc::new(t) as Rc<dyn Tracer>),
        }));
        let registration = registry::register(Rc::downgrade(&spec));
        Ok(ContextCompiler { spec, registration })
    }

    #[wasm_bindgen(getter = __nativeId, skip_typescript)]
    /// Registry id (internal).
    pub fn native_id(&self) -> u32 {
        self.registration.id()
    }

    /// The layout: `"single-system"` or `"zoned"`.
    #[wasm_bindgen(getter, unchecked_return_type = "Layout")]
    pub fn layout(&self) -> String {
        match self.spec.borrow().layout {
            Layout::SingleSystem => "single-system".into(),
            Layout::Zoned => "zoned".into(),
        }
    }

    /// Appends a processor to the pipeline.
    #[wasm_bindgen(js_name = addProcessor)]
    pub fn add_processor(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Processor")] processor: JsValue,
    ) -> JsResult<()> {
        let entry = ProcessorEntry::from_js(&processor, "processor")?;
        self.spec.borrow_mut().processors.push(entry);
        Ok(())
    }

    /// The processors' names, in order.
    #[wasm_bindgen(getter, js_name = processorNames)]
    pub fn processor_names(&self) -> Vec<String> {
        self.spec
            .borrow()
            .processors
            .iter()
            .map(ProcessorEntry::name)
            .collect()
    }

    /// Compiles `session` under `budget` (a positive integer or a
    /// `TokenBudget`) and resolves to a `WorkingContext` that never exceeds
    /// it. Options: `systemPrompt`; `tools` (counted in SYSTEM as `format`
    /// sends them), `reserveOutput`, `usageMargin`; for the zoned layout
    /// also `policies`, `toolDefinitions`, `userPreferences`, `goal`,
    /// `stateDigest` and `taskState`; `tracer`, tracing this compile instead
    /// of the compiler's tracer. On failure the session is unchanged. While a compile
    /// runs, `session.record` and tool calls still record: their events
    /// are queued behind the compile's view and indexed when it ends.
    #[wasm_bindgen(unchecked_return_type = "Promise<WorkingContext>")]
    pub fn compile(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Session")] session: JsValue,
        #[wasm_bindgen(unchecked_param_type = "number | TokenBudget")] budget: JsValue,
        options: Option<CompileOptionsArg>,
    ) -> js_sys::Promise {
        let prepared = (|| -> Result<(Rc<RefCell<Session>>, u64, CompileOptions, _)> {
            Ok((
                session_arg(&session, "session")?,
                budget_arg(&budget)?,
                compile_options(&options, None, "model")?,
                JsTracer::from_option(&option(&options, "tracer", "options")?, "options.tracer")?,
            ))
        })();
        let (session, budget, options, tracer) = match prepared {
            Ok(p) => p,
            Err(e) => return js_sys::Promise::reject(&to_js_error(e)),
        };
        let compiler = self.spec.borrow().bind(&session, None);
        let compiler = match tracer {
            Some(tracer) => compiler.with_tracer(Rc::new(tracer)),
            None => compiler,
        };
        let renderings = self.spec.borrow().renderings.clone();
        // The shared borrow is held across the pipeline's awaits on purpose:
        // the pipeline reads one consistent view, while `record` (and other
        // compiles' writes) queue behind it through `record_shared`.
        #[allow(clippy::await_holding_refcell_ref)]
        spawn(async move {
            let (ctx, writes) = {
                let view = session.try_borrow().map_err(|_| {
                    Error::new(ErrorCode::SessionBusy, "the session is being written to")
                })?;
                compiler.compile_view(&view, budget, &options).await?
            };
            writes.apply_shared(&session)?;
            Ok(WorkingContext::compiled(ctx, &session)?
                .sharing_renderings(renderings)
                .into())
        })
    }
}

/// The live `ContextCompiler` behind `value` (one registered by this module).
pub(crate) fn registered(value: &JsValue) -> Option<Rc<RefCell<CompilerSpec>>> {
    context_compiler_js::registry::live::<RefCell<CompilerSpec>>(value)
}
