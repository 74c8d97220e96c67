//! Summaries of the events a compaction folds away: a deterministic
//! built-in digest, and the prompt given to an injected [`crate::Llm`].

use std::collections::BTreeMap;

use crate::compiler::facts::{facts_of, keep, Fact};
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

/// The heading of the facts in a built-in digest.
const FACTS_HEADING: &str = "Facts, as said:";

/// A previous summary as its fact lines (a built-in digest's) and the
/// rest (all of another summariser's text).
fn split_facts(previous: &str) -> (String, String) {
    let mut facts = Vec::new();
    let mut rest = Vec::new();
    let mut in_facts = false;
    for line in previous.lines() {
        if line == FACTS_HEADING {
            in_facts = true;
            continue;
        }
        match line.strip_prefix("- ").filter(|_| in_facts) {
            Some(fact) => facts.push(fact),
            None => {
                in_facts = false;
                // Its own "Before them" is not nested again.
                if !line.starts_with("Before them: ") {
                    rest.push(line);
                }
            }
        }
    }
    (facts.join("\n"), rest.join("\n"))
}

/// A deterministic digest of the events in `(after, through]` and the
/// previous summary, at most `max_chars` characters: the facts said (the
/// sentences with names, numbers, dates, paths, decisions and errors, word
/// for word, in half the room), the user's requests, the tools used (with
/// failures), the artifacts stored and the last reply.
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
    // The facts of the previous summary first (older), then of the turns.
    let mut order = 0usize;
    let (previous_facts, previous) = previous.map(split_facts).unwrap_or_default();
    let mut facts: Vec<Fact> = facts_of(&previous_facts, &mut order);
    for &p in range(log, after, through) {
        let e = &events[p];
        if e.kind == TOOL_CALL {
            continue;
        }
        match render(&e.kind, &e.data) {
            Some(Rendered::Message { role, content }) => {
                turns += 1;
                facts.extend(facts_of(&content, &mut order));
                if role == "user" {
                    requests.push(one_line(&content, 160));
                } else {
                    last_reply = Some(one_line(&content, 300));
                }
            }
            Some(Rendered::ToolOutcome { .. }) | Some(Rendered::Artifact(_)) => {
                let tool = render::outcome_tool(&e.data).to_string();
                let failed = e.kind == TOOL_ERROR || e.kind == TOOL_TIMEOUT;
                if failed {
                    if let Some(Rendered::ToolOutcome { result, .. }) = render(&e.kind, &e.data) {
                        facts.extend(facts_of(&format!("{tool} {result}"), &mut order));
                    }
                }
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
    if let Some(prev) = Some(previous.as_str()).filter(|p| !p.is_empty()) {
        lines.push(format!("Before them: {}", one_line(prev, max_chars / 6)));
    }
    let kept = keep(facts, max_chars / 2, 240);
    if !kept.is_empty() {
        lines.push(FACTS_HEADING.into());
        lines.extend(kept.into_iter().map(|f| format!("- {f}")));
    }
    // The facts are never cut: what follows them takes the room left.
    let head = lines.join("\n");
    let mut lines: Vec<String> = Vec::new();
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
    let head_chars = head.chars().count();
    if head_chars >= max_chars {
        return summarize_text(&head, max_chars);
    }
    let room = max_chars - head_chars - 1;
    if lines.is_empty() || room < 40 {
        return head;
    }
    format!("{head}\n{}", summarize_text(&lines.join("\n"), room))
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
