//! `ContextWindow` for JS: the corteX 4-zone window.

use std::rc::Rc;

use context_compiler_js::error::{JsResult, Thrown};
use js_sys::Array;
use wasm_bindgen::prelude::*;

use crate::budget::positive_budget;
use crate::session::counter_option;
use crate::types::*;
use context_compiler::context_window::ContextWindow as CoreWindow;
use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler::zones::{ZoneBudgets, DEFAULT_ZONE_BUDGETS};
use context_compiler_js::convert::{bool_option, from_js, js_to_json, option, string, to_js};
use context_compiler_js::env::JsClock;

/// The corteX 4-zone context window: SYSTEM, PERSISTENT, WORKING and
/// RECENT, compaction levels at 80/90/95%, and a compile that never exceeds
/// `maxContextTokens`.
#[wasm_bindgen]
pub struct ContextWindow {
    inner: CoreWindow,
}

fn js(v: Result<JsValue>) -> JsResult<JsValue> {
    v.map_err(Thrown::from)
}

fn importance(options: &Option<ImportanceOptionsArg>) -> Result<Option<f64>> {
    let v = option(options, "importance", "options")?;
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    v.as_f64().map(Some).ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidArgument,
            "options.importance must be a number",
        )
    })
}

fn zone_budgets(value: &JsValue) -> Result<Option<ZoneBudgets>> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    let json = js_to_json(value, "options.zoneBudgets")?;
    let map = json.as_object().ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidArgument,
            "options.zoneBudgets must be an object",
        )
    })?;
    let mut budgets = DEFAULT_ZONE_BUDGETS;
    for (key, v) in map {
        let ratio = v.as_f64().ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!("options.zoneBudgets.{key} must be a number"),
            )
        })?;
        match key.as_str() {
            "system" => budgets.system = ratio,
            "persistent" => budgets.persistent = ratio,
            "working" => budgets.working = ratio,
            "recent" => budgets.recent = ratio,
            other => {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    format!("options.zoneBudgets has an unknown zone '{other}' (system, persistent, working, recent)"),
                ))
            }
        }
    }
    Ok(Some(budgets))
}

impl ContextWindow {
    /// Converts `value` to JSON (naming it `what` in errors) and hands it to
    /// the core window's setter `set`.
    fn set_json(
        &mut self,
        value: &JsValue,
        what: &str,
        set: fn(&mut CoreWindow, serde_json::Value) -> Result<()>,
    ) -> JsResult<()> {
        let json = js_to_json(value, what)?;
        set(&mut self.inner, json).map_err(Thrown::from)
    }
}

#[wasm_bindgen]
impl ContextWindow {
    /// Options: `maxContextTokens` (default 128000), `zoneBudgets` (shares
    /// of the window per zone; missing zones keep the defaults, and they
    /// must sum to at most 1), `tokenCounter`.
    #[wasm_bindgen(constructor)]
    pub fn new(options: Option<ContextWindowOptionsArg>) -> JsResult<ContextWindow> {
        (|| -> Result<ContextWindow> {
            let max = option(&options, "maxContextTokens", "options")?;
            let max = if max.is_undefined() || max.is_null() {
                128_000
            } else {
                positive_budget(&max).map_err(|_| {
                    Error::new(
                        ErrorCode::InvalidBudget,
                        "options.maxContextTokens must be a positive integer",
                    )
                })?
            };
            let budgets = zone_budgets(&option(&options, "zoneBudgets", "options")?)?;
            let counter = counter_option(&options, "options")?;
            Ok(ContextWindow {
                inner: CoreWindow::new(max, budgets, counter, Rc::new(JsClock))?,
            })
        })()
        .map_err(Thrown::from)
    }

    /// The window size.
    #[wasm_bindgen(getter, js_name = maxContextTokens)]
    pub fn max_context_tokens(&self) -> f64 {
        self.inner.max_context_tokens() as f64
    }

    /// Each zone's share of the window.
    #[wasm_bindgen(getter, js_name = zoneBudgets, unchecked_return_type = "ZoneUsage")]
    pub fn zone_budgets(&self) -> JsResult<JsValue> {
        js(to_js(&self.inner.zone_budgets()))
    }

    /// Sets the system prompt (SYSTEM zone).
    #[wasm_bindgen(js_name = setSystemPrompt)]
    pub fn set_system_prompt(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string")] prompt: JsValue,
    ) -> JsResult<()> {
        self.inner.set_system_prompt(&string(&prompt, "prompt")?);
        Ok(())
    }

    /// Sets user preferences (an object), shown under `## User Preferences`.
    #[wasm_bindgen(js_name = setUserPreferences)]
    pub fn set_user_preferences(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Record<string, Json>")] prefs: JsValue,
    ) -> JsResult<()> {
        self.set_json(&prefs, "prefs", CoreWindow::set_user_preferences)
    }

    /// Sets the policies, shown as a bullet list under `## Policies`.
    #[wasm_bindgen(js_name = setPolicies)]
    pub fn set_policies(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string[]")] policies: JsValue,
    ) -> JsResult<()> {
        let policies: Vec<String> = from_js(&policies, "policies")?;
        self.inner.set_policies(policies);
        Ok(())
    }

    /// Sets the tool definitions (each with a string `name`), listed under
    /// `## Available Tools`.
    #[wasm_bindgen(js_name = setToolDefinitions)]
    pub fn set_tool_definitions(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Array<{ name: string } & Record<string, Json>>")]
        tools: JsValue,
    ) -> JsResult<()> {
        let tools: Vec<serde_json::Value> = from_js(&tools, "tools")?;
        self.inner.set_tool_definitions(tools).map_err(Thrown::from)
    }

    /// Sets the goal: at the start (PERSISTENT) and restated at the end.
    #[wasm_bindgen(js_name = setGoal)]
    pub fn set_goal(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string")] goal: JsValue,
    ) -> JsResult<()> {
        self.inner.set_goal(&string(&goal, "goal")?);
        Ok(())
    }

    /// Sets the brain state digest (an object), shown under `## Brain State`.
    #[wasm_bindgen(js_name = setBrainDigest)]
    pub fn set_brain_digest(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Record<string, Json>")] digest: JsValue,
    ) -> JsResult<()> {
        self.set_json(&digest, "digest", CoreWindow::set_brain_digest)
    }

    /// Sets the task state, shown under `## Current Task` at the start of RECENT.
    #[wasm_bindgen(js_name = setTaskState)]
    pub fn set_task_state(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string")] state: JsValue,
    ) -> JsResult<()> {
        self.inner.set_task_state(&string(&state, "state")?);
        Ok(())
    }

    /// Appends a message to working memory. Options: `importance` (default
    /// 0.5, clamped to [0, 1]).
    #[wasm_bindgen(js_name = appendMessage)]
    pub fn append_message(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string")] role: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] content: JsValue,
        options: Option<ImportanceOptionsArg>,
    ) -> JsResult<()> {
        let (role, content) = (string(&role, "role")?, string(&content, "content")?);
        let importance = importance(&options)?;
        self.inner
            .append_message(&role, &content, importance)
            .map_err(Thrown::from)
    }

    /// Appends a tool result to working memory (importance 0.8 when it
    /// failed, 0.4 otherwise). Options: `success` (default true).
    #[wasm_bindgen(js_name = appendToolResult)]
    pub fn append_tool_result(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string")] tool_name: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] result: JsValue,
        options: Option<ToolResultOptionsArg>,
    ) -> JsResult<()> {
        let tool_name = string(&tool_name, "toolName")?;
        let result = string(&result, "result")?;
        let success = bool_option(&options, "success", true)?;
        self.inner
            .append_tool_result(&tool_name, &result, success)
            .map_err(Thrown::from)
    }

    /// Adds a message to the RECENT zone. Options: `importance` (default
    /// 0.7, clamped to [0, 1]).
    #[wasm_bindgen(js_name = addRecentMessage)]
    pub fn add_recent_message(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string")] role: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] content: JsValue,
        options: Option<ImportanceOptionsArg>,
    ) -> JsResult<()> {
        let (role, content) = (string(&role, "role")?, string(&content, "content")?);
        let importance = importance(&options)?;
        self.inner
            .add_recent_message(&role, &content, importance)
            .map_err(Thrown::from)
    }

    /// Writes a scratchpad note into working memory.
    #[wasm_bindgen(js_name = writeScratchpad)]
    pub fn write_scratchpad(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string")] note: JsValue,
    ) -> JsResult<()> {
        self.inner.write_scratchpad(&string(&note, "note")?);
        Ok(())
    }

    /// Assembles the window: `{ messages, totalTokens, zoneUsage,
    /// compactionNeeded, compactionLevel, dropped }`, never more than
    /// `maxContextTokens`.
    #[wasm_bindgen(unchecked_return_type = "CompiledContext")]
    pub fn compile(&self) -> JsResult<JsValue> {
        let compiled = self.inner.compile();
        self.inner.check_counter()?;
        js(to_js(&compiled))
    }

    /// The compaction level of the current utilisation, without compiling.
    #[wasm_bindgen(js_name = getCompactionLevel, unchecked_return_type = "CompactionLevel")]
    pub fn get_compaction_level(&self) -> JsResult<String> {
        let level = self.inner.get_compaction_level();
        self.inner.check_counter()?;
        Ok(level.as_str().to_string())
    }

    /// Replaces working memory and the scratchpad with one summary.
    #[wasm_bindgen(js_name = compactWorkingMemory)]
    pub fn compact_working_memory(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string")] summary: JsValue,
    ) -> JsResult<()> {
        self.inner
            .compact_working_memory(&string(&summary, "summary")?)
            .map_err(Thrown::from)
    }

    /// Keeps only the goal, the summary and the last two recent items.
    #[wasm_bindgen(js_name = emergencyCompact)]
    pub fn emergency_compact(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string")] summary: JsValue,
    ) -> JsResult<()> {
        self.inner
            .emergency_compact(&string(&summary, "summary")?)
            .map_err(Thrown::from)
    }

    /// Token usage and item counts per zone (in camelCase).
    #[wasm_bindgen(js_name = getStats, unchecked_return_type = "ContextStats")]
    pub fn get_stats(&self) -> JsResult<JsValue> {
        let stats = self.inner.get_stats();
        self.inner.check_counter()?;
        js(to_js(&stats))
    }

    /// The items of working memory.
    #[wasm_bindgen(getter, js_name = workingItems, unchecked_return_type = "ContextItem[]")]
    pub fn working_items(&self) -> JsResult<JsValue> {
        js(to_js(self.inner.working_items()))
    }

    /// The items of the RECENT zone.
    #[wasm_bindgen(getter, js_name = recentItems, unchecked_return_type = "ContextItem[]")]
    pub fn recent_items(&self) -> JsResult<JsValue> {
        js(to_js(self.inner.recent_items()))
    }

    /// The scratchpad notes.
    #[wasm_bindgen(getter, js_name = scratchpadNotes, unchecked_return_type = "string[]")]
    pub fn scratchpad_notes(&self) -> Array {
        self.inner
            .scratchpad_notes()
            .iter()
            .map(|s| JsValue::from(s.as_str()))
            .collect()
    }
}

/// Reads a string option (`undefined`/`null` give `None`).
pub(crate) fn string_option(value: &JsValue, what: &str) -> Result<Option<String>> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    string(value, what).map(Some)
}
