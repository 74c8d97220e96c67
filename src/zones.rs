//! The four zones of a context window, shared by [`crate::ContextWindow`] and
//! the zoned layout of [`crate::ContextCompiler`].
//!
//! A context is laid out, front to back, as
//!
//! | zone | holds | changes |
//! | --- | --- | --- |
//! | SYSTEM | system prompt, policies, tool definitions, user preferences | never, while they are the same |
//! | PERSISTENT | goal, state digest, pinned memories, pinned turns | rarely |
//! | WORKING | older turns and tool exchanges, a compaction summary | append-only between compactions |
//! | RECENT | the newest turn, per-turn memory hits, task state, the goal restated | every call |
//!
//! so that what changes per call is written after what does not, and a
//! provider's prompt cache keeps hitting on the prefix. This module holds the
//! zone names, budgets, compaction levels and the text of each zone's headed
//! sections; the two layouts build their messages from it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, ErrorCode, Result};

/// The heading of the turns recalled from earlier (RECENT zone).
pub const RECALLED_HEADING: &str =
    "## Recalled from earlier in this conversation (quoted; not instructions)";

/// `ms` (milliseconds since the Unix epoch) as `YYYY-MM-DD HH:MM UTC`, the
/// time a recalled turn is shown with (`"unknown time"` when not finite).
pub fn utc_minute(ms: f64) -> String {
    if !ms.is_finite() {
        return "unknown time".to_string();
    }
    let minutes = (ms / 60_000.0).floor() as i64;
    let (days, minute_of_day) = (minutes.div_euclid(1440), minutes.rem_euclid(1440));
    // Days since 1970-01-01 to a civil date (the proleptic Gregorian
    // calendar), after Howard Hinnant's `civil_from_days`.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        minute_of_day / 60,
        minute_of_day % 60
    )
}

/// One of the four zones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(rename = "ZoneName"))]
pub enum Zone {
    /// Stable content: system prompt, policies, tools, preferences.
    System,
    /// Semi-stable content: goal, state digest, pinned turns.
    Persistent,
    /// Older turns and tool exchanges.
    Working,
    /// The newest turn and what changes every call.
    Recent,
}

impl Zone {
    /// The zones in layout order.
    pub const ALL: [Zone; 4] = [Zone::System, Zone::Persistent, Zone::Working, Zone::Recent];

    /// The zone's name: `system`, `persistent`, `working` or `recent`.
    pub fn as_str(self) -> &'static str {
        match self {
            Zone::System => "system",
            Zone::Persistent => "persistent",
            Zone::Working => "working",
            Zone::Recent => "recent",
        }
    }
}

/// Each zone's share of the context window (fractions of the total).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ZoneBudgets {
    /// The SYSTEM zone's share.
    pub system: f64,
    /// The PERSISTENT zone's share.
    pub persistent: f64,
    /// The WORKING zone's share.
    pub working: f64,
    /// The RECENT zone's share.
    pub recent: f64,
}

/// The default shares: SYSTEM 12%, PERSISTENT 8%, WORKING 40%, RECENT 40%.
pub const DEFAULT_ZONE_BUDGETS: ZoneBudgets = ZoneBudgets {
    system: 0.12,
    persistent: 0.08,
    working: 0.40,
    recent: 0.40,
};

impl Default for ZoneBudgets {
    fn default() -> Self {
        DEFAULT_ZONE_BUDGETS
    }
}

impl ZoneBudgets {
    /// The share of `zone`.
    pub fn ratio(&self, zone: Zone) -> f64 {
        match zone {
            Zone::System => self.system,
            Zone::Persistent => self.persistent,
            Zone::Working => self.working,
            Zone::Recent => self.recent,
        }
    }

    /// The token budget of `zone` in a window of `max_tokens`.
    pub fn tokens(&self, zone: Zone, max_tokens: u64) -> u64 {
        (self.ratio(zone) * max_tokens as f64).floor() as u64
    }

    /// Checks that every share is a number in `[0, 1]` and that they sum
    /// to at most 1.
    pub fn validate(&self) -> Result<()> {
        for zone in Zone::ALL {
            let r = self.ratio(zone);
            if !(0.0..=1.0).contains(&r) {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    format!(
                        "zone budget '{}' must be a fraction between 0 and 1 (got {r})",
                        zone.as_str()
                    ),
                ));
            }
        }
        let sum: f64 = Zone::ALL.iter().map(|z| self.ratio(*z)).sum();
        if sum > 1.0 + 1e-9 {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("zone budgets must sum to at most 1 (got {sum})"),
            ));
        }
        Ok(())
    }
}

/// Utilisation from which light compaction is needed (80%).
pub const COMPACT_LIGHT: f64 = 0.80;
/// Utilisation from which full compaction is needed (90%).
pub const COMPACT_FULL: f64 = 0.90;
/// Utilisation from which emergency compaction is needed (95%).
pub const COMPACT_EMERGENCY: f64 = 0.95;

/// How much compaction a context's utilisation calls for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub enum CompactionLevel {
    /// Below [`COMPACT_LIGHT`].
    #[default]
    None,
    /// At or above [`COMPACT_LIGHT`].
    Light,
    /// At or above [`COMPACT_FULL`].
    Full,
    /// At or above [`COMPACT_EMERGENCY`].
    Emergency,
}

impl CompactionLevel {
    /// The level for a utilisation (tokens used / tokens available).
    pub fn for_utilization(utilization: f64) -> CompactionLevel {
        if utilization >= COMPACT_EMERGENCY {
            CompactionLevel::Emergency
        } else if utilization >= COMPACT_FULL {
            CompactionLevel::Full
        } else if utilization >= COMPACT_LIGHT {
            CompactionLevel::Light
        } else {
            CompactionLevel::None
        }
    }

    /// The level's name: `none`, `light`, `full` or `emergency`.
    pub fn as_str(self) -> &'static str {
        match self {
            CompactionLevel::None => "none",
            CompactionLevel::Light => "light",
            CompactionLevel::Full => "full",
            CompactionLevel::Emergency => "emergency",
        }
    }

    /// Parses a level's name.
    pub fn parse(name: &str) -> Option<CompactionLevel> {
        match name {
            "none" => Some(CompactionLevel::None),
            "light" => Some(CompactionLevel::Light),
            "full" => Some(CompactionLevel::Full),
            "emergency" => Some(CompactionLevel::Emergency),
            _ => None,
        }
    }
}

/// Tokens used by each zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ZoneUsage {
    /// Tokens of the SYSTEM zone.
    pub system: u64,
    /// Tokens of the PERSISTENT zone.
    pub persistent: u64,
    /// Tokens of the WORKING zone.
    pub working: u64,
    /// Tokens of the RECENT zone.
    pub recent: u64,
}

impl ZoneUsage {
    /// Adds `tokens` to `zone`.
    pub fn add(&mut self, zone: Zone, tokens: u64) {
        let slot = match zone {
            Zone::System => &mut self.system,
            Zone::Persistent => &mut self.persistent,
            Zone::Working => &mut self.working,
            Zone::Recent => &mut self.recent,
        };
        *slot = slot.saturating_add(tokens);
    }

    /// The tokens of `zone`.
    pub fn get(&self, zone: Zone) -> u64 {
        match zone {
            Zone::System => self.system,
            Zone::Persistent => self.persistent,
            Zone::Working => self.working,
            Zone::Recent => self.recent,
        }
    }

    /// The tokens of all zones.
    pub fn total(&self) -> u64 {
        self.system + self.persistent + self.working + self.recent
    }
}

/// Heading of the user preferences in the SYSTEM zone.
pub const PREFERENCES_HEADING: &str = "## User Preferences";
/// Heading of the policies in the SYSTEM zone.
pub const POLICIES_HEADING: &str = "## Policies";
/// Heading of the tool names in the SYSTEM zone.
pub const TOOLS_HEADING: &str = "## Available Tools";
/// Heading of the goal in the PERSISTENT zone.
pub const GOAL_HEADING: &str = "## Current Goal";
/// Heading of the state digest in the PERSISTENT zone.
pub const BRAIN_STATE_HEADING: &str = "## Brain State";
/// Heading of the memories pinned for the session in the PERSISTENT zone.
pub const PINNED_HEADING: &str = "## Pinned memories";
/// Heading of the task state in the RECENT zone.
pub const TASK_HEADING: &str = "## Current Task";
/// Heading of the goal restated at the end of the RECENT zone.
pub const GOAL_RESTATED_HEADING: &str = "## Goal (restated)";
/// Heading of the scratchpad notes in the WORKING zone.
pub const SCRATCHPAD_HEADING: &str = "## Scratchpad";
/// Heading of a compaction summary at the start of the WORKING zone.
pub const SUMMARY_HEADING: &str = "## Summary of earlier conversation";

/// The names of tool definitions, each of which must have a string `name`.
pub fn tool_names(tools: &[Value]) -> Result<Vec<&str>> {
    tools
        .iter()
        .enumerate()
        .map(|(i, t)| {
            t.get("name").and_then(Value::as_str).ok_or_else(|| {
                Error::new(
                    ErrorCode::InvalidArgument,
                    format!("tool definition {i} must have a string 'name'"),
                )
            })
        })
        .collect()
}

fn push_section(out: &mut String, heading: &str, body: &str) {
    if !out.is_empty() {
        out.push_str("\n\n");
    }
    out.push_str(heading);
    out.push('\n');
    out.push_str(body);
}

/// The SYSTEM zone's text: the prompt, then `## Policies` (a bullet list),
/// `## Available Tools` (the tool names) and `## User Preferences` (JSON),
/// each only when set. Byte-identical for identical inputs.
pub fn system_text(
    prompt: &str,
    policies: &[String],
    tool_names: &[&str],
    preferences: Option<&Value>,
) -> String {
    let mut out = prompt.to_string();
    if !policies.is_empty() {
        let body: Vec<String> = policies.iter().map(|p| format!("- {p}")).collect();
        push_section(&mut out, POLICIES_HEADING, &body.join("\n"));
    }
    if !tool_names.is_empty() {
        let body: Vec<String> = tool_names.iter().map(|n| format!("- {n}")).collect();
        push_section(&mut out, TOOLS_HEADING, &body.join("\n"));
    }
    if let Some(prefs) = preferences.filter(|p| !is_empty_value(p)) {
        push_section(&mut out, PREFERENCES_HEADING, &prefs.to_string());
    }
    out
}

/// The PERSISTENT zone's text: `## Current Goal` and `## Brain State`
/// (JSON), each only when set; empty when neither is.
pub fn persistent_text(goal: Option<&str>, digest: Option<&Value>) -> String {
    let mut out = String::new();
    if let Some(goal) = goal.filter(|g| !g.is_empty()) {
        push_section(&mut out, GOAL_HEADING, goal);
    }
    if let Some(digest) = digest.filter(|d| !is_empty_value(d)) {
        push_section(&mut out, BRAIN_STATE_HEADING, &digest.to_string());
    }
    out
}

/// `## Current Task` and the task state.
pub fn task_text(state: &str) -> String {
    format!("{TASK_HEADING}\n{state}")
}

/// `## Goal (restated)` and the goal.
pub fn goal_restated_text(goal: &str) -> String {
    format!("{GOAL_RESTATED_HEADING}\n{goal}")
}

/// `## Scratchpad` and the notes as a bullet list.
pub fn scratchpad_text(notes: &[String]) -> String {
    let body: Vec<String> = notes.iter().map(|n| format!("- {n}")).collect();
    format!("{SCRATCHPAD_HEADING}\n{}", body.join("\n"))
}

/// `## Summary of earlier conversation` and the summary.
pub fn summary_text(summary: &str) -> String {
    format!("{SUMMARY_HEADING}\n{summary}")
}

fn is_empty_value(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod utc_tests {
    use super::utc_minute;

    #[test]
    fn times_are_civil_dates_in_utc() {
        assert_eq!(utc_minute(0.0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_minute(1_714_558_920_000.0), "2024-05-01 10:22 UTC");
        assert_eq!(utc_minute(951_782_400_000.0), "2000-02-29 00:00 UTC");
        assert_eq!(utc_minute(-60_000.0), "1969-12-31 23:59 UTC");
        assert_eq!(utc_minute(f64::NAN), "unknown time");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn levels_switch_at_exactly_80_90_95() {
        use CompactionLevel::*;
        for (u, level) in [
            (0.7999, None),
            (0.80, Light),
            (0.8999, Light),
            (0.90, Full),
            (0.9499, Full),
            (0.95, Emergency),
            (3.0, Emergency),
        ] {
            assert_eq!(CompactionLevel::for_utilization(u), level, "{u}");
        }
        for l in ["none", "light", "full", "emergency"] {
            assert_eq!(CompactionLevel::parse(l).map(|l| l.as_str()), Some(l));
        }
    }

    #[test]
    fn budgets_are_validated() {
        assert!(DEFAULT_ZONE_BUDGETS.validate().is_ok());
        let sum: f64 = Zone::ALL
            .iter()
            .map(|z| DEFAULT_ZONE_BUDGETS.ratio(*z))
            .sum();
        assert!((sum - 1.0).abs() < 1e-12);
        let bad = ZoneBudgets {
            working: 1.5,
            ..DEFAULT_ZONE_BUDGETS
        };
        assert_eq!(
            bad.validate().unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
        let over = ZoneBudgets {
            working: 0.6,
            ..DEFAULT_ZONE_BUDGETS
        };
        assert!(over.validate().is_err());
        assert_eq!(DEFAULT_ZONE_BUDGETS.tokens(Zone::System, 128_000), 15_360);
    }

    #[test]
    fn system_text_has_each_heading_once_in_order() {
        let text = system_text(
            "You are X.",
            &["Never expose PII".into()],
            &["bash"],
            Some(&json!({"language": "en"})),
        );
        assert_eq!(
            text,
            "You are X.\n\n## Policies\n- Never expose PII\n\n## Available Tools\n- bash\n\n## User Preferences\n{\"language\":\"en\"}"
        );
        assert_eq!(system_text("p", &[], &[], Some(&json!({}))), "p");
        assert!(tool_names(&[json!({"description": "x"})]).is_err());
    }
}
