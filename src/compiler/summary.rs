//! Summaries of the events a compaction folds away: a deterministic
//! built-in digest, and the prompt given to an injected [`crate::Llm`].

use std::collections::BTreeMap;

use crate::normalize::summary::summarize_text;
use crate::session::render::{self, render, Rendered};
use crate::session::{EventLog, TOOL_CALL, TOOL_ERROR, TOOL_TIMEOUT};

/// Characters of the transcript an LLM summariser is given at most (the
/// newest part is kept).
pub(crate) const TRANSCRIPT_CHARS: usize = 24_000;

/// The timeline positions in `(after, through]`.
fn range(log: &EventLog, after: Option<usize>, through: usize) -> &[usize] {
    let timeline = log.timeline();
    let lo = timeline.partition_point(|&p| after.is_some_and(|a| p <= a));
    let hi = timeline.partition_point(|&p| p <= through);
    &timeline[lo..hi.max(lo)]
}

fn one_line(text: &str, max: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    summarize_text(flat.trim(), max)
}

/// A deterministic digest of the events in `(after, through]` and the
/// previous summary, at most `max_chars` characters: the user's requests,
/// the tools used (with failures), the artifacts stored and the last reply.
pub(crate) fn builtin_summary(
    log: &EventLog,
    after: Option<usize>,
    through: usize,
    previous: Option<&str>,
    max_chars: usize,
) -> String {
    let events = log.events();
    let mut turns = 0usize;
    let mut requests: Vec<String> = Vec::new();
    let mut tools: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut artifacts: Vec<String> = Vec::new();
    let mut last_reply: Option<String> = None;
    for &p in range(log, after, through) {
        let e = &events[p];
        if e.kind == TOOL_CALL {
            continue;
        }
        match render(&e.kind, &e.data) {
            Some(Rendered::Message { role, content }) => {
                turns += 1;
                if role == "user" {
                    requests.push(one_line(&content, 160));
                } else {
                    last_reply = Some(one_line(&content, 300));
                }
            }
            Some(Rendered::ToolOutcome { .. }) | Some(Rendered::Artifact(_)) => {
                let tool = render::outcome_tool(&e.data).to_string();
                let failed = e.kind == TOOL_ERROR || e.kind == TOOL_TIMEOUT;
                let entry = tools.entry(tool.clone()).or_default();
                entry.0 += 1;
                entry.1 += usize::from(failed);
                let artifact =
                    log.externalized(&e.event_id)
                        .cloned()
                        .or(match render(&e.kind, &e.data) {
                            Some(Rendered::Artifact(r)) => Some(r),
                            _ => None,
                        });
                if let Some(r) = artifact {
                    artifacts.push(format!("{} ({tool}, {} bytes)", r.handle, r.size_bytes));
                }
            }
            None => {}
        }
    }

    let mut lines = vec![format!("{turns} earlier turns were compacted.")];
    if let Some(prev) = previous.filter(|p| !p.is_empty()) {
        lines.push(format!("Before them: {}", one_line(prev, max_chars / 3)));
    }
    if !requests.is_empty() {
        lines.push("The user asked:".into());
        let skip = requests.len().saturating_sub(6);
        if skip > 0 {
            lines.push(format!("- ({skip} earlier requests)"));
        }
        lines.extend(requests[skip..].iter().map(|r| format!("- {r}")));
    }
    if !tools.is_empty() {
        let used: Vec<String> = tools
            .iter()
            .map(|(name, (n, failed))| match failed {
                0 => format!("{name} ×{n}"),
                f => format!("{name} ×{n} ({f} failed)"),
            })
            .collect();
        lines.push(format!("Tools used: {}.", used.join(", ")));
    }
    if !artifacts.is_empty() {
        let skip = artifacts.len().saturating_sub(5);
        lines.push(format!(
            "Artifacts stored: {}.",
            artifacts[skip..].join("; ")
        ));
    }
    if let Some(reply) = last_reply {
        lines.push(format!("Last assistant reply: {reply}"));
    }
    summarize_text(&lines.join("\n"), max_chars)
}

/// The events in `(after, through]` as a transcript, newest part kept when
/// longer than [`TRANSCRIPT_CHARS`].
fn transcript(log: &EventLog, after: Option<usize>, through: usize) -> String {
    let events = log.events();
    let mut lines: Vec<String> = Vec::new();
    for &p in range(log, after, through) {
        let e = &events[p];
        if e.kind == TOOL_CALL {
            lines.push(format!(
                "tool call: {}({})",
                render::call_name(&e.data),
                one_line(&render::call_arguments(&e.data).to_string(), 300)
            ));
            continue;
        }
        match render(&e.kind, &e.data) {
            Some(Rendered::Message { role, content }) => {
                lines.push(format!("{role}: {}", one_line(&content, 2_000)))
            }
            Some(Rendered::ToolOutcome { tool, result }) => {
                lines.push(format!("tool result {tool}: {}", one_line(&result, 500)))
            }
            Some(Rendered::Artifact(r)) => lines.push(format!(
                "tool result {}: artifact {} ({} bytes) {}",
                render::outcome_tool(&e.data),
                r.handle,
                r.size_bytes,
                r.summary
            )),
            None => {}
        }
    }
    let text = lines.join("\n");
    let total = text.chars().count();
    if total <= TRANSCRIPT_CHARS {
        return text;
    }
    let tail: String = text.chars().skip(total - TRANSCRIPT_CHARS).collect();
    format!(
        "[… {} earlier characters omitted]\n{tail}",
        total - TRANSCRIPT_CHARS
    )
}

/// The prompt an LLM summariser gets.
pub(crate) fn llm_prompt(
    log: &EventLog,
    after: Option<usize>,
    through: usize,
    previous: Option<&str>,
    max_tokens: u64,
) -> String {
    let previous = previous.filter(|p| !p.is_empty()).unwrap_or("(none)");
    format!(
        "You are compacting an AI agent's conversation so that it fits the agent's context window. \
Write a summary of at most {max_tokens} tokens that the agent will read instead of these turns. \
Keep the user's goals and requests, decisions made, facts learned, tool results that matter \
(with their artifact handles), errors, and open questions. Write plain text, no preamble.\n\n\
Previous summary:\n{previous}\n\nConversation to summarise:\n{}",
        transcript(log, after, through)
    )
}
