//! The `context-window` interface: the corteX 4-zone window.

use std::cell::RefCell;
use std::rc::Rc;

use super::bindings::exports::agent::context_compiler::context_window::{
    CompactionLevel as WitLevel, Error, Guest, GuestWindow, Window, ZoneBudgets as WitBudgets,
};
use super::{parse_json, to_json, wit_error, Component};
use context_compiler::clock::SystemClock;
use context_compiler::context_window::ContextWindow;
use context_compiler::tokens::DefaultTokenCounter;
use context_compiler::zones::{CompactionLevel, ZoneBudgets};

/// A `window` resource: the core's window behind a cell (WIT methods take
/// `&self`).
pub(crate) struct WindowResource {
    inner: RefCell<ContextWindow>,
}

impl Guest for Component {
    type Window = WindowResource;
}

impl WindowResource {
    /// Runs the core window's fallible setter `set` with `value`, turning its
    /// error into the WIT error.
    fn update<T>(
        &self,
        value: T,
        set: fn(&mut ContextWindow, T) -> context_compiler::error::Result<()>,
    ) -> Result<(), Error> {
        set(&mut self.inner.borrow_mut(), value).map_err(wit_error)
    }

    /// Adds a message through the core window's `add` (append to a zone, or
    /// to the recent ones), turning its error into the WIT error.
    fn add(
        &self,
        add: fn(&mut ContextWindow, &str, &str, Option<f64>) -> context_compiler::error::Result<()>,
        role: &str,
        content: &str,
        importance: Option<f64>,
    ) -> Result<(), Error> {
        Ok(add(
            &mut self.inner.borrow_mut(),
            role,
            content,
            importance,
        )?)
    }
}

impl GuestWindow for WindowResource {
    fn create(max_context_tokens: u64, zone_budgets: Option<WitBudgets>) -> Result<Window, Error> {
        let budgets = zone_budgets.map(|b| ZoneBudgets {
            system: b.system,
            persistent: b.persistent,
            working: b.working,
            recent: b.recent,
        });
        let window = ContextWindow::new(
            max_context_tokens,
            budgets,
            Rc::new(DefaultTokenCounter),
            Rc::new(SystemClock),
        )?;
        Ok(Window::new(WindowResource {
            inner: RefCell::new(window),
        }))
    }

    fn set_system_prompt(&self, prompt: String) {
        self.inner.borrow_mut().set_system_prompt(&prompt);
    }

    fn set_user_preferences(&self, prefs_json: String) -> Result<(), Error> {
        self.update(
            parse_json(&prefs_json, "prefs-json")?,
            ContextWindow::set_user_preferences,
        )
    }

    fn set_policies(&self, policies: Vec<String>) {
        self.inner.borrow_mut().set_policies(policies);
    }

    fn set_tool_definitions(&self, tools_json: String) -> Result<(), Error> {
        let tools = match parse_json(&tools_json, "tools-json")? {
            serde_json::Value::Array(a) => a,
            _ => {
                return Err(wit_error(context_compiler::error::Error::new(
                    context_compiler::error::ErrorCode::InvalidArgument,
                    "tools-json must be a JSON array",
                )))
            }
        };
        self.update(tools, ContextWindow::set_tool_definitions)
    }

    fn set_goal(&self, goal: String) {
        self.inner.borrow_mut().set_goal(&goal);
    }

    fn set_brain_digest(&self, digest_json: String) -> Result<(), Error> {
        self.update(
            parse_json(&digest_json, "digest-json")?,
            ContextWindow::set_brain_digest,
        )
    }

    fn set_task_state(&self, state: String) {
        self.inner.borrow_mut().set_task_state(&state);
    }

    fn append_message(
        &self,
        role: String,
        content: String,
        importance: Option<f64>,
    ) -> Result<(), Error> {
        self.add(ContextWindow::append_message, &role, &content, importance)
    }

    fn append_tool_result(&self, tool_name: String, output: String, success: bool) {
        // The component's counters (default, words) never fail to count.
        let _ = self
            .inner
            .borrow_mut()
            .append_tool_result(&tool_name, &output, success);
    }

    fn add_recent_message(
        &self,
        role: String,
        content: String,
        importance: Option<f64>,
    ) -> Result<(), Error> {
        self.add(
            ContextWindow::add_recent_message,
            &role,
            &content,
            importance,
        )
    }

    fn write_scratchpad(&self, note: String) {
        self.inner.borrow_mut().write_scratchpad(&note);
    }

    fn compile(&self) -> String {
        to_json(&self.inner.borrow().compile()).unwrap_or_default()
    }

    fn get_compaction_level(&self) -> WitLevel {
        match self.inner.borrow().get_compaction_level() {
            CompactionLevel::None => WitLevel::None,
            CompactionLevel::Light => WitLevel::Light,
            CompactionLevel::Full => WitLevel::Full,
            CompactionLevel::Emergency => WitLevel::Emergency,
        }
    }

    fn compact_working_memory(&self, summary: String) {
        // The component's counters (default, words) never fail to count.
        let _ = self.inner.borrow_mut().compact_working_memory(&summary);
    }

    fn emergency_compact(&self, summary: String) {
        let _ = self.inner.borrow_mut().emergency_compact(&summary);
    }

    fn get_stats(&self) -> String {
        to_json(&self.inner.borrow().get_stats()).unwrap_or_default()
    }
}
