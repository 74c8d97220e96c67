//! The corteX 4-zone context window: a stateful builder that an
//! agent fills zone by zone and compiles into messages for a model call.
//!
//! [`ContextWindow::compile`] never returns more than
//! `max_context_tokens`: when the window holds more, it leaves out the least
//! important items first (from zones over their own budget first), then
//! truncates the largest text, and lists every change in
//! [`CompiledContext::dropped`]. The window itself is not changed by a
//! compile; compaction is the caller's decision ([`ContextWindow::compact_working_memory`],
//! [`ContextWindow::emergency_compact`]), guided by the compaction level.

use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::clock::Clock;
use crate::error::{Error, ErrorCode, Result};
use crate::tokens::{truncate_to_tokens, TokenCounter};
use crate::working_context::{DropAction, Message};
use crate::zones::{self, CompactionLevel, Zone, ZoneBudgets, ZoneUsage, DEFAULT_ZONE_BUDGETS};
use context_compiler_text::order::{float, sort_stable_by_key};

/// Default importance of [`ContextWindow::append_message`].
pub const DEFAULT_MESSAGE_IMPORTANCE: f64 = 0.5;
/// Default importance of [`ContextWindow::add_recent_message`].
pub const DEFAULT_RECENT_IMPORTANCE: f64 = 0.7;
/// Importance of a failed tool result.
pub const FAILED_TOOL_IMPORTANCE: f64 = 0.8;
/// Importance of a successful tool result.
pub const SUCCESSFUL_TOOL_IMPORTANCE: f64 = 0.4;
/// Importance of a compaction summary (kept over ordinary items).
pub const SUMMARY_IMPORTANCE: f64 = 0.9;
/// How many recent items [`ContextWindow::emergency_compact`] keeps.
pub const EMERGENCY_KEEP_RECENT: usize = 2;

/// One item of the window, with its importance .
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ContextItem {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    /// The text as it appears in the compiled message.
    pub content: String,
    /// Tokens of the compiled message (content plus per-message overhead).
    pub token_estimate: u64,
    /// Importance in `[0, 1]`; the least important items are left out first.
    pub importance: f64,
    /// When the item was added, in milliseconds since the Unix epoch.
    pub timestamp: f64,
    /// The zone the item belongs to.
    pub zone: Zone,
    /// Extra data, e.g. `tool_name` and `success` of a tool result.
    #[cfg_attr(test, ts(as = "crate::typescript::JsonObject"))]
    pub metadata: Map<String, Value>,
}

/// What [`ContextWindow::compile`] left out or cut to stay within
/// `max_context_tokens`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct WindowDrop {
    /// The zone of the item.
    pub zone: Zone,
    /// The item's role.
    pub role: String,
    /// Whether it was left out or truncated.
    pub action: DropAction,
    /// Tokens removed.
    pub tokens_removed: u64,
}

/// The assembled window .
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct CompiledContext {
    /// Ordered messages for the model.
    pub messages: Vec<Message>,
    /// Tokens of `messages` (content plus per-message overhead); never more
    /// than `max_context_tokens`.
    pub total_tokens: u64,
    /// Tokens per zone in `messages`.
    pub zone_usage: ZoneUsage,
    /// Whether the window's utilisation calls for compaction.
    pub compaction_needed: bool,
    /// The compaction level of the window's utilisation.
    pub compaction_level: CompactionLevel,
    /// What was left out or truncated to fit (empty when the window fits).
    pub dropped: Vec<WindowDrop>,
}

/// Token usage and item counts (`get_stats`'s keys).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ContextStats {
    /// The configured window size.
    pub max_context_tokens: u64,
    /// Tokens of the SYSTEM zone.
    pub system_tokens: u64,
    /// Tokens of the PERSISTENT zone.
    pub persistent_tokens: u64,
    /// Tokens of the WORKING zone, scratchpad included.
    pub working_tokens: u64,
    /// Items in working memory.
    pub working_items: usize,
    /// Scratchpad notes.
    pub scratchpad_notes: usize,
    /// Tokens of the RECENT zone, task state and goal restatement included.
    pub recent_tokens: u64,
    /// Items in the recent zone.
    pub recent_items: usize,
    /// Tokens of all zones.
    pub total_tokens_estimate: u64,
    /// `total_tokens_estimate / max_context_tokens`, capped to [0.0, 1.0]
    /// as documented (a window holding more than fits is at 1.0;
    /// its compile drops what does not fit).
    pub utilization: f64,
    /// `total_tokens_estimate / max_context_tokens` uncapped: how far over
    /// the window the zones are (above 1.0 when they hold more than fits).
    pub demand_ratio: f64,
    /// The compaction level of that utilisation.
    pub compaction_level: CompactionLevel,
    /// Whether a goal is set.
    pub goal_set: bool,
}

/// The 4-zone context window.
pub struct ContextWindow {
    max_context_tokens: u64,
    zone_budgets: ZoneBudgets,
    counter: Rc<dyn TokenCounter>,
    clock: Rc<dyn Clock>,
    system_prompt: String,
    user_preferences: Option<Value>,
    policies: Vec<String>,
    tool_definitions: Vec<Value>,
    goal: Option<String>,
    brain_digest: Option<Value>,
    task_state: Option<String>,
    working: Vec<ContextItem>,
    scratchpad: Vec<String>,
    recent: Vec<ContextItem>,
}

/// What a compiled slot is, for leaving out and truncating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SlotKind {
    /// A headed section that is never left out, only truncated.
    Fixed,
    /// An item that may be left out.
    Evictable,
}

struct Slot {
    zone: Zone,
    role: String,
    content: String,
    tokens: u64,
    importance: f64,
    kind: SlotKind,
}

fn check_importance(importance: f64) -> Result<f64> {
    if importance.is_nan() {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "importance must be a number (got NaN)",
        ));
    }
    Ok(importance.clamp(0.0, 1.0))
}

impl ContextWindow {
    /// A window of `max_context_tokens` with the given zone shares (the
    /// defaults when `None`), counting with `counter` and stamping
    /// items with `clock`.
    pub fn new(
        max_context_tokens: u64,
        zone_budgets: Option<ZoneBudgets>,
        counter: Rc<dyn TokenCounter>,
        clock: Rc<dyn Clock>,
    ) -> Result<ContextWindow> {
        if max_context_tokens == 0 {
            return Err(Error::new(
                ErrorCode::InvalidBudget,
                "maxContextTokens must be a positive number of tokens (got 0)",
            ));
        }
        let zone_budgets = zone_budgets.unwrap_or(DEFAULT_ZONE_BUDGETS);
        zone_budgets.validate()?;
        Ok(ContextWindow {
            max_context_tokens,
            zone_budgets,
            counter,
            clock,
            system_prompt: String::new(),
            user_preferences: None,
            policies: Vec::new(),
            tool_definitions: Vec::new(),
            goal: None,
            brain_digest: None,
            task_state: None,
            working: Vec::new(),
            scratchpad: Vec::new(),
            recent: Vec::new(),
        })
    }

    /// The window size.
    pub fn max_context_tokens(&self) -> u64 {
        self.max_context_tokens
    }

    /// The zone shares.
    pub fn zone_budgets(&self) -> ZoneBudgets {
        self.zone_budgets
    }

    /// Sets the agent's system prompt (SYSTEM zone).
    pub fn set_system_prompt(&mut self, prompt: &str) {
        self.system_prompt = prompt.to_string();
    }

    /// Sets user preferences, shown as JSON under `## User Preferences`.
    pub fn set_user_preferences(&mut self, prefs: Value) -> Result<()> {
        if !prefs.is_object() {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "user preferences must be an object",
            ));
        }
        self.user_preferences = Some(prefs);
        Ok(())
    }

    /// Sets the active policies, shown as a bullet list under `## Policies`.
    pub fn set_policies(&mut self, policies: Vec<String>) {
        self.policies = policies;
    }

    /// Sets the tool definitions; their names are listed under
    /// `## Available Tools`. Each must have a string `name`.
    pub fn set_tool_definitions(&mut self, tools: Vec<Value>) -> Result<()> {
        zones::tool_names(&tools)?;
        self.tool_definitions = tools;
        Ok(())
    }

    /// Sets the goal: shown at the start (PERSISTENT) and restated at the
    /// end (RECENT).
    pub fn set_goal(&mut self, goal: &str) {
        self.goal = Some(goal.to_string()).filter(|g| !g.is_empty());
    }

    /// Sets the brain state digest, shown as JSON under `## Brain State`.
    pub fn set_brain_digest(&mut self, digest: Value) -> Result<()> {
        if !digest.is_object() {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "the brain digest must be an object",
            ));
        }
        self.brain_digest = Some(digest);
        Ok(())
    }

    /// Sets the task state, shown under `## Current Task` at the start of
    /// the RECENT zone.
    pub fn set_task_state(&mut self, state: &str) {
        self.task_state = Some(state.to_string()).filter(|s| !s.is_empty());
    }

    /// An item of `content`, counted; fails when the counter could not.
    fn item(
        &self,
        zone: Zone,
        role: &str,
        content: String,
        importance: f64,
    ) -> Result<ContextItem> {
        let _ = self.counter.take_failure();
        let token_estimate = self.counter.count(&content) + self.counter.message_overhead();
        if let Some(e) = self.counter.take_failure() {
            return Err(e);
        }
        Ok(ContextItem {
            role: role.to_string(),
            content,
            token_estimate,
            importance,
            timestamp: self.clock.now_ms(),
            zone,
            metadata: Map::new(),
        })
    }

    /// Fails with the error of a count the counter could not make since
    /// it was last asked (a read-only call such as [`ContextWindow::compile`]
    /// counts with the default counter's answer meanwhile).
    pub fn check_counter(&self) -> Result<()> {
        self.counter.take_failure().map_or(Ok(()), Err)
    }

    /// Appends a conversation message to working memory (importance 0.5 by
    /// default, clamped to `[0, 1]`).
    pub fn append_message(
        &mut self,
        role: &str,
        content: &str,
        importance: Option<f64>,
    ) -> Result<()> {
        let importance = check_importance(importance.unwrap_or(DEFAULT_MESSAGE_IMPORTANCE))?;
        let item = self.item(Zone::Working, role, content.to_string(), importance)?;
        self.working.push(item);
        Ok(())
    }

    /// Appends a tool result to working memory: importance 0.8 when it
    /// failed, 0.4 when it succeeded. Shown as a `tool` message
    /// `[name] result` (`[name failed] result` for a failure).
    pub fn append_tool_result(
        &mut self,
        tool_name: &str,
        result: &str,
        success: bool,
    ) -> Result<()> {
        let (label, importance) = if success {
            (tool_name.to_string(), SUCCESSFUL_TOOL_IMPORTANCE)
        } else {
            (format!("{tool_name} failed"), FAILED_TOOL_IMPORTANCE)
        };
        let mut item = self.item(
            Zone::Working,
            "tool",
            format!("[{label}] {result}"),
            importance,
        )?;
        item.metadata
            .insert("tool_name".into(), Value::from(tool_name));
        item.metadata.insert("success".into(), Value::from(success));
        self.working.push(item);
        Ok(())
    }

    /// Adds a message to the RECENT zone (importance 0.7 by default,
    /// clamped to `[0, 1]`).
    pub fn add_recent_message(
        &mut self,
        role: &str,
        content: &str,
        importance: Option<f64>,
    ) -> Result<()> {
        let importance = check_importance(importance.unwrap_or(DEFAULT_RECENT_IMPORTANCE))?;
        let item = self.item(Zone::Recent, role, content.to_string(), importance)?;
        self.recent.push(item);
        Ok(())
    }

    /// Writes a scratchpad note into working memory, shown under
    /// `## Scratchpad`.
    pub fn write_scratchpad(&mut self, note: &str) {
        self.scratchpad.push(note.to_string());
    }

    /// The items of working memory, oldest first.
    pub fn working_items(&self) -> &[ContextItem] {
        &self.working
    }

    /// The items of the RECENT zone, oldest first.
    pub fn recent_items(&self) -> &[ContextItem] {
        &self.recent
    }

    /// The scratchpad notes, oldest first.
    pub fn scratchpad_notes(&self) -> &[String] {
        &self.scratchpad
    }

    /// The goal, when set.
    pub fn goal(&self) -> Option<&str> {
        self.goal.as_deref()
    }

    fn section(&self, zone: Zone, content: String) -> Slot {
        let tokens = self.counter.count(&content) + self.counter.message_overhead();
        Slot {
            zone,
            role: "system".into(),
            content,
            tokens,
            importance: 1.0,
            kind: SlotKind::Fixed,
        }
    }

    fn from_item(item: &ContextItem, kind: SlotKind) -> Slot {
        Slot {
            zone: item.zone,
            role: item.role.clone(),
            content: item.content.clone(),
            tokens: item.token_estimate,
            importance: item.importance,
            kind,
        }
    }

    /// The window's messages in zone order, each with its tokens.
    fn slots(&self) -> Vec<Slot> {
        let mut slots = Vec::with_capacity(self.working.len() + self.recent.len() + 6);
        let names = zones::tool_names(&self.tool_definitions).unwrap_or_default();
        let system = zones::system_text(
            &self.system_prompt,
            &self.policies,
            &names,
            self.user_preferences.as_ref(),
        );
        if !system.is_empty() {
            slots.push(self.section(Zone::System, system));
        }
        let persistent = zones::persistent_text(self.goal.as_deref(), self.brain_digest.as_ref());
        if !persistent.is_empty() {
            slots.push(self.section(Zone::Persistent, persistent));
        }
        slots.extend(
            self.working
                .iter()
                .map(|i| Self::from_item(i, SlotKind::Evictable)),
        );
        if !self.scratchpad.is_empty() {
            let mut s = self.section(Zone::Working, zones::scratchpad_text(&self.scratchpad));
            s.kind = SlotKind::Evictable;
            s.importance = DEFAULT_MESSAGE_IMPORTANCE;
            slots.push(s);
        }
        if let Some(task) = &self.task_state {
            slots.push(self.section(Zone::Recent, zones::task_text(task)));
        }
        let last = self.recent.len().saturating_sub(1);
        slots.extend(self.recent.iter().enumerate().map(|(i, item)| {
            // The newest recent item is never left out, only truncated.
            let kind = if i == last {
                SlotKind::Fixed
            } else {
                SlotKind::Evictable
            };
            Self::from_item(item, kind)
        }));
        if let Some(goal) = &self.goal {
            slots.push(self.section(Zone::Recent, zones::goal_restated_text(goal)));
        }
        slots
    }

    fn usage(slots: &[Slot]) -> ZoneUsage {
        let mut usage = ZoneUsage::default();
        for s in slots {
            usage.add(s.zone, s.tokens);
        }
        usage
    }

    fn utilization(&self, total: u64) -> f64 {
        total as f64 / self.max_context_tokens as f64
    }

    /// Assembles the window into messages: SYSTEM, PERSISTENT (goal and
    /// digest), WORKING (messages, tool results, scratchpad), RECENT (task
    /// state, recent messages, the goal restated last). Never more than
    /// `max_context_tokens`; see the module documentation.
    pub fn compile(&self) -> CompiledContext {
        let mut slots = self.slots();
        let usage = Self::usage(&slots);
        let level = CompactionLevel::for_utilization(self.utilization(usage.total()));
        let max = self.max_context_tokens;
        let mut total = usage.total();
        let mut dropped = Vec::new();

        if total > max {
            // Leave out the least important items, from zones over their
            // own budget first, oldest first among equals.
            let over_budget =
                |z: Zone| usage.get(z) > self.zone_budgets.tokens(z, self.max_context_tokens);
            let mut order: Vec<usize> = (0..slots.len())
                .filter(|&i| slots[i].kind == SlotKind::Evictable)
                .collect();
            sort_stable_by_key(&mut order, |&i| {
                let rest = u64::from(!over_budget(slots[i].zone));
                (rest, float(slots[i].importance))
            });
            let mut removed = vec![false; slots.len()];
            for i in order {
                if total <= max {
                    break;
                }
                removed[i] = true;
                total -= slots[i].tokens;
                dropped.push(WindowDrop {
                    zone: slots[i].zone,
                    role: slots[i].role.clone(),
                    action: DropAction::Dropped,
                    tokens_removed: slots[i].tokens,
                });
            }
            let mut kept = removed.iter();
            slots.retain(|_| !kept.next().copied().unwrap_or(false));
        }

        let overhead = self.counter.message_overhead();
        while total > max {
            let over = total - max;
            let largest = slots
                .iter()
                .enumerate()
                .filter(|(_, s)| !s.content.is_empty())
                .max_by_key(|(_, s)| s.tokens)
                .map(|(i, _)| i);
            match largest {
                Some(i) => {
                    let s = &mut slots[i];
                    let content_tokens = s.tokens.saturating_sub(overhead);
                    let cut = truncate_to_tokens(
                        self.counter.as_ref(),
                        &s.content,
                        content_tokens.saturating_sub(over),
                    );
                    let tokens = self.counter.count(&cut) + overhead;
                    let removed = s.tokens.saturating_sub(tokens);
                    s.content = cut;
                    s.tokens = tokens;
                    total -= removed;
                    dropped.push(WindowDrop {
                        zone: s.zone,
                        role: s.role.clone(),
                        action: DropAction::Truncated,
                        tokens_removed: removed,
                    });
                }
                None => {
                    // Only per-message overhead is left: drop empty messages.
                    let Some(s) = slots.pop() else { break };
                    total -= s.tokens;
                    dropped.push(WindowDrop {
                        zone: s.zone,
                        role: s.role,
                        action: DropAction::Dropped,
                        tokens_removed: s.tokens,
                    });
                }
            }
        }

        let zone_usage = Self::usage(&slots);
        CompiledContext {
            messages: slots
                .into_iter()
                .map(|s| Message {
                    role: s.role,
                    content: s.content,
                })
                .collect(),
            total_tokens: zone_usage.total(),
            zone_usage,
            compaction_needed: level != CompactionLevel::None,
            compaction_level: level,
            dropped,
        }
    }

    /// The compaction level of the current utilisation, without compiling.
    pub fn get_compaction_level(&self) -> CompactionLevel {
        let total = Self::usage(&self.slots()).total();
        CompactionLevel::for_utilization(self.utilization(total))
    }

    fn summary_item(&self, summary: &str) -> Result<ContextItem> {
        self.item(
            Zone::Working,
            "system",
            zones::summary_text(summary),
            SUMMARY_IMPORTANCE,
        )
    }

    /// Replaces every working-memory item and scratchpad note with one
    /// summary (light or full compaction).
    pub fn compact_working_memory(&mut self, summary: &str) -> Result<()> {
        self.working = vec![self.summary_item(summary)?];
        self.scratchpad.clear();
        Ok(())
    }

    /// Keeps only the goal, the summary and the last two recent items:
    /// working memory becomes the summary, the scratchpad, brain digest and
    /// task state are cleared. The SYSTEM zone is kept.
    pub fn emergency_compact(&mut self, summary: &str) -> Result<()> {
        self.compact_working_memory(summary)?;
        let keep_from = self.recent.len().saturating_sub(EMERGENCY_KEEP_RECENT);
        self.recent.drain(..keep_from);
        self.brain_digest = None;
        self.task_state = None;
        Ok(())
    }

    /// Token usage and item counts per zone.
    pub fn get_stats(&self) -> ContextStats {
        let usage = Self::usage(&self.slots());
        let total = usage.total();
        let demand_ratio = self.utilization(total);
        let utilization = demand_ratio.clamp(0.0, 1.0);
        ContextStats {
            max_context_tokens: self.max_context_tokens,
            system_tokens: usage.system,
            persistent_tokens: usage.persistent,
            working_tokens: usage.working,
            working_items: self.working.len(),
            scratchpad_notes: self.scratchpad.len(),
            recent_tokens: usage.recent,
            recent_items: self.recent.len(),
            total_tokens_estimate: total,
            utilization,
            demand_ratio,
            compaction_level: CompactionLevel::for_utilization(demand_ratio),
            goal_set: self.goal.is_some(),
        }
    }
}

impl std::fmt::Debug for ContextWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContextWindow")
            .field("max_context_tokens", &self.max_context_tokens)
            .field("zone_budgets", &self.zone_budgets)
            .field("working", &self.working.len())
            .field("recent", &self.recent.len())
            .finish_non_exhaustive()
    }
}
