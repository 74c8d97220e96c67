//! Where a compiled context stops matching the previous compile's, message
//! by message: the prompt prefix a provider can serve from its cache, and,
//! when it breaks, what broke it. Each message is fingerprinted without its
//! format (a conversation turn by its event and what the compile did to it,
//! the layout's own messages by their text), so the report holds for every
//! request format rendered from the context.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher};
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use crate::tokens::TokenCounter;
use crate::working_context::provider::prepare;
use crate::working_context::zoned::{self, TailPart};
use crate::working_context::{
    placeholder_at, single_system_zone, HistoryMessage, Layout, Shared, WorkingContext,
    CONVERSATION_START,
};
use crate::zones::Zone;

/// What broke the prompt prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub enum MissCause {
    /// No earlier compile of this session by this compiler.
    First,
    /// The system prompt, policies or preferences changed.
    System,
    /// The tools the request offers changed.
    Tools,
    /// The goal, the state digest or the pinned memories changed.
    Persistent,
    /// The compaction summary changed.
    Compaction,
    /// The window of turns moved: a different turn is now at this place.
    Window,
    /// The turns recalled into the last message changed.
    Recall,
    /// A turn already in the window changed (masked, externalised, cut).
    History,
    /// A turn's images or files changed.
    Media,
}

impl MissCause {
    /// The cause's name, as the JSON says it (`first`, `system`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            MissCause::First => "first",
            MissCause::System => "system",
            MissCause::Tools => "tools",
            MissCause::Persistent => "persistent",
            MissCause::Compaction => "compaction",
            MissCause::Window => "window",
            MissCause::Recall => "recall",
            MissCause::History => "history",
            MissCause::Media => "media",
        }
    }
}

/// Where and why the prefix broke.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct CacheMiss {
    /// The first message that differs (0 is the system message).
    pub message_index: usize,
    /// Its zone.
    pub zone: Zone,
    /// What changed.
    pub cause: MissCause,
    /// What changed, in words.
    pub detail: String,
}

/// How much of a context repeats the previous compile's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct CacheReport {
    /// Tokens of the messages before the first that differs.
    pub prefix_tokens: u64,
    /// Messages before the first that differs.
    pub prefix_messages: usize,
    /// `None` when the whole previous context is still the prefix.
    pub miss: Option<CacheMiss>,
}

/// What a message of a compiled context is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// The SYSTEM message; the hash of the tools beside it.
    System { tools: u64 },
    /// The PERSISTENT system message (goal, state digest).
    Persistent,
    /// The memory message; the hash of its summary.
    Memory { summary: u64 },
    /// A conversation turn, from its message's event when it came from
    /// one; the hash of its media.
    Turn { event: EventOf, media: u64 },
    /// The `[conversation start]` message.
    Placeholder,
    /// The tail; the hash of its recalled turns.
    Tail { recalled: u64 },
}

/// The event a turn came from: named by the turn's message when another
/// holder shares it (the session's log keeps it anyway: no copy of its id),
/// else by a copy of its id (a message of this compile's own, such as one
/// whose images were loaded, is not kept alive by the report). Equal when
/// the ids are.
#[derive(Debug, Clone)]
enum EventOf {
    /// A message shared with another holder.
    Shared(Shared),
    /// The id of a message this compile holds alone.
    Id(Option<String>),
}

impl EventOf {
    /// How `turn` is named.
    fn of(turn: &Shared) -> EventOf {
        if Rc::strong_count(turn) > 1 {
            EventOf::Shared(Rc::clone(turn))
        } else {
            EventOf::Id(turn.event_id.clone())
        }
    }

    /// The event's id, when the turn came from one.
    fn id(&self) -> Option<&str> {
        match self {
            EventOf::Shared(m) => m.event_id.as_deref(),
            EventOf::Id(id) => id.as_deref(),
        }
    }
}

impl PartialEq for EventOf {
    fn eq(&self, other: &EventOf) -> bool {
        self.id() == other.id()
    }
}

impl Eq for EventOf {}

/// One message's fingerprint.
#[derive(Debug, Clone)]
struct Print {
    kind: Kind,
    /// Its zone (not part of the fingerprint: the newest question moves
    /// from RECENT to WORKING unchanged).
    zone: Zone,
    hash: u64,
    tokens: u64,
}

impl Print {
    /// Whether two messages render the same.
    fn same(&self, other: &Print) -> bool {
        self.kind == other.kind && self.hash == other.hash && self.tokens == other.tokens
    }
}

/// A hasher for fingerprints: foldhash with a fixed seed (a fingerprint
/// only tells one compile's messages from the previous compile's, in one
/// process; a full window hashes thousands of them at each compile).
fn hasher() -> impl Hasher {
    foldhash::quality::FixedState::default().build_hasher()
}

fn hash_of(value: impl Hash) -> u64 {
    let mut h = hasher();
    value.hash(&mut h);
    h.finish()
}

/// A turn's fingerprint: its event and what the compile did to it (its
/// count changes with its text), or its text when it has no event.
fn turn_print(turn: &Shared, zone: Zone, counter: &dyn TokenCounter) -> Option<Print> {
    let m = prepare(turn)?;
    let tokens = m
        .tokens
        .unwrap_or_else(|| zoned::message_tokens(&m, counter))
        + counter.message_overhead();
    let mut h = hasher();
    match &m.event_id {
        Some(event) => event.hash(&mut h),
        None => m.content.hash(&mut h),
    }
    (&m.role, &m.tool_call_id, m.masked, tokens).hash(&mut h);
    m.artifact.as_ref().map(|a| &a.handle).hash(&mut h);
    for c in &m.tool_calls {
        (&c.id, &c.name).hash(&mut h);
    }
    let hash = h.finish();
    let mut h = hasher();
    for p in &m.media {
        (&p.artifact, &p.url, p.tokens).hash(&mut h);
    }
    let media = h.finish();
    Some(Print {
        kind: Kind::Turn {
            event: EventOf::of(turn),
            media,
        },
        zone,
        hash,
        tokens,
    })
}

/// The fingerprints of `ctx`'s messages, in order.
fn prints(ctx: &WorkingContext, counter: &dyn TokenCounter) -> Vec<Print> {
    let overhead = counter.message_overhead();
    let memo = &ctx.section_tokens;
    let tools = hash_of((
        ctx.tool_tokens,
        ctx.tool_definitions
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>(),
    ));
    let mut out = Vec::with_capacity(ctx.history.len() + 4);
    let system = match ctx.layout {
        Layout::Zoned => zoned::system_zone_text(ctx),
        Layout::SingleSystem => ctx.system_content(),
    };
    out.push(Print {
        kind: Kind::System { tools },
        zone: Zone::System,
        hash: hash_of(&system),
        tokens: memo.count(counter, &system) + overhead + ctx.tool_tokens,
    });
    let zoned = ctx.layout == Layout::Zoned;
    if zoned {
        let persistent = zoned::persistent_zone_text(ctx);
        if !persistent.is_empty() {
            out.push(Print {
                kind: Kind::Persistent,
                zone: Zone::Persistent,
                hash: hash_of(&persistent),
                tokens: memo.count(counter, &persistent) + overhead,
            });
        }
        let pinned = zoned::pinned_text(ctx);
        let summary = zoned::summary_section(ctx);
        let memory = zoned::memory_text(&pinned, &summary);
        if !memory.is_empty() {
            out.push(Print {
                kind: Kind::Memory {
                    summary: hash_of(&summary),
                },
                zone: if summary.is_empty() {
                    Zone::Persistent
                } else {
                    Zone::Working
                },
                hash: hash_of(&memory),
                tokens: memo.count(counter, &memory) + overhead,
            });
        }
    }
    let recent = zoned::recent_start(&ctx.history);
    let placeholder = placeholder_at(&ctx.history);
    let zone_of = |i: usize, h: &HistoryMessage| {
        if zoned {
            zoned::history_zone(h, i, recent)
        } else {
            single_system_zone(i, recent)
        }
    };
    let start = Print {
        kind: Kind::Placeholder,
        zone: Zone::Recent,
        hash: hash_of(CONVERSATION_START),
        tokens: memo.count(counter, CONVERSATION_START) + overhead,
    };
    for (i, h) in ctx.history.iter().enumerate() {
        let zone = zone_of(i, h);
        if placeholder == Some(i) {
            out.push(Print {
                zone,
                ..start.clone()
            });
        }
        out.extend(turn_print(h, zone, counter));
    }
    if placeholder == Some(ctx.history.len()) {
        out.push(start);
    }
    if zoned {
        let sections = zoned::tail_sections(ctx);
        if !sections.is_empty() {
            let recalled = sections
                .iter()
                .find(|(part, _)| *part == TailPart::Recalled)
                .map(|(_, text)| hash_of(text))
                .unwrap_or(0);
            let texts: Vec<&str> = sections.iter().map(|(_, text)| text.as_str()).collect();
            let tail = texts.join("\n\n");
            out.push(Print {
                kind: Kind::Tail { recalled },
                zone: Zone::Recent,
                hash: hash_of(&tail),
                tokens: memo.count(counter, &tail) + overhead,
            });
        }
    }
    out
}

/// Why `now` differs from `before`, the messages at `index` of two
/// compiles.
fn cause(before: &Print, now: &Print) -> (MissCause, String) {
    match (&before.kind, &now.kind) {
        (Kind::System { tools: a }, Kind::System { tools: b }) if a != b => (
            MissCause::Tools,
            "the tools the request offers changed".into(),
        ),
        (Kind::System { .. }, Kind::System { .. }) => (
            MissCause::System,
            "the system prompt, policies or preferences changed".into(),
        ),
        (Kind::Persistent, Kind::Persistent) => (
            MissCause::Persistent,
            "the goal or the state digest changed".into(),
        ),
        (Kind::Memory { summary: a }, Kind::Memory { summary: b }) if a != b => (
            MissCause::Compaction,
            "the compaction summary changed".into(),
        ),
        (Kind::Memory { .. }, Kind::Memory { .. }) => {
            (MissCause::Persistent, "the pinned memories changed".into())
        }
        (
            Kind::Turn {
                event: a,
                media: ma,
            },
            Kind::Turn {
                event: b,
                media: mb,
            },
        ) if a == b => {
            let event = b.id().unwrap_or("a turn");
            if ma != mb {
                (
                    MissCause::Media,
                    format!("the images or files of {event} changed"),
                )
            } else {
                (
                    MissCause::History,
                    format!("{event} is shown differently (masked, externalised or cut)"),
                )
            }
        }
        (Kind::Turn { event: a, .. }, Kind::Turn { event: b, .. }) => (
            MissCause::Window,
            format!(
                "the window moved: this message was {}, is now {}",
                a.id().unwrap_or("a turn"),
                b.id().unwrap_or("a turn")
            ),
        ),
        (Kind::Tail { recalled: a }, Kind::Tail { recalled: b }) if a != b => (
            MissCause::Recall,
            "the turns recalled from earlier changed".into(),
        ),
        // The last message always comes last: the turns since go before it.
        (Kind::Tail { recalled }, _) if *recalled != 0 => (
            MissCause::Recall,
            "the previous last message, with its recalled turns, is not repeated (it always comes last)".into(),
        ),
        (Kind::Memory { .. }, _) | (_, Kind::Memory { .. }) => (
            MissCause::Compaction,
            "the compaction summary or pinned memories came or went".into(),
        ),
        (Kind::Persistent, _) | (_, Kind::Persistent) => (
            MissCause::Persistent,
            "the goal or the state digest came or went".into(),
        ),
        (_, Kind::Tail { .. }) | (Kind::Tail { .. }, _) => (
            MissCause::History,
            "the last message (task state, memories, tool results, the goal restated) changed or moved to the end".into(),
        ),
        _ => (
            MissCause::Window,
            "the window moved: a different message is at this place".into(),
        ),
    }
}

/// Compares the fingerprints of two compiles.
fn compare(before: Option<&[Print]>, now: &[Print]) -> CacheReport {
    let Some(before) = before else {
        return CacheReport {
            prefix_tokens: 0,
            prefix_messages: 0,
            miss: Some(CacheMiss {
                message_index: 0,
                zone: Zone::System,
                cause: MissCause::First,
                detail: "the first compile of this session by this compiler".into(),
            }),
        };
    };
    let same = before
        .iter()
        .zip(now)
        .take_while(|(a, b)| a.same(b))
        .count();
    let prefix_tokens = now.iter().take(same).map(|p| p.tokens).sum();
    let miss = match (before.get(same), now.get(same)) {
        // The whole previous context is still the prefix.
        (None, _) => None,
        (Some(a), Some(b)) => {
            let (cause, detail) = cause(a, b);
            Some(CacheMiss {
                message_index: same,
                zone: b.zone,
                cause,
                detail,
            })
        }
        (Some(a), None) => Some(CacheMiss {
            message_index: same,
            zone: a.zone,
            cause: MissCause::Window,
            detail: "the context ends earlier than the previous one did".into(),
        }),
    };
    CacheReport {
        prefix_tokens,
        prefix_messages: same,
        miss,
    }
}

/// The previous compile's fingerprints of the sessions a compiler compiled
/// most recently, to report each compile's prefix against: at most
/// [`PrefixTracker::SESSIONS`] (or the capacity given), the least recently
/// compiled forgotten first, so one compiler serving thousands of threads
/// stays the same size. A forgotten session's next report says `first`.
#[derive(Debug)]
pub struct PrefixTracker {
    capacity: usize,
    previous: RefCell<TrackedPrints>,
}

/// Each session's fingerprints and when it was last compiled.
#[derive(Debug, Default)]
struct TrackedPrints {
    by_session: HashMap<String, (u64, Vec<Print>)>,
    clock: u64,
}

impl Default for PrefixTracker {
    fn default() -> Self {
        PrefixTracker::with_capacity(PrefixTracker::SESSIONS)
    }
}

impl PrefixTracker {
    /// How many sessions a tracker remembers by default (a few KB each).
    pub const SESSIONS: usize = 256;

    /// A tracker that has seen no compile, remembering
    /// [`PrefixTracker::SESSIONS`] sessions.
    pub fn new() -> Self {
        PrefixTracker::default()
    }

    /// A tracker that remembers the last compile of at most `sessions`
    /// sessions (at least one).
    pub fn with_capacity(sessions: usize) -> Self {
        PrefixTracker {
            capacity: sessions.max(1),
            previous: RefCell::new(TrackedPrints::default()),
        }
    }

    /// How many sessions the tracker remembers now.
    pub fn len(&self) -> usize {
        self.previous.borrow().by_session.len()
    }

    /// Whether the tracker remembers no session.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How much of `ctx`, compiled for `session_id`, repeats the previous
    /// context this tracker saw for it; remembers `ctx` for the next.
    pub fn observe(
        &self,
        session_id: &str,
        ctx: &WorkingContext,
        counter: &dyn TokenCounter,
    ) -> CacheReport {
        let now = prints(ctx, counter);
        let mut tracked = self.previous.borrow_mut();
        let report = compare(
            tracked
                .by_session
                .get(session_id)
                .map(|(_, p)| p.as_slice()),
            &now,
        );
        tracked.clock += 1;
        let stamp = tracked.clock;
        if !tracked.by_session.contains_key(session_id) && tracked.by_session.len() >= self.capacity
        {
            let oldest = tracked
                .by_session
                .iter()
                .min_by_key(|(_, (used, _))| *used)
                .map(|(id, _)| id.clone());
            if let Some(oldest) = oldest {
                tracked.by_session.remove(&oldest);
            }
        }
        tracked
            .by_session
            .insert(session_id.to_string(), (stamp, now));
        report
    }
}

#[cfg(test)]
mod tracker_tests {
    use super::*;

    fn ctx() -> WorkingContext {
        WorkingContext::new("You are an SRE.", 1000)
    }

    #[test]
    fn the_least_recently_compiled_session_is_forgotten_first() {
        let counter = crate::tokens::DefaultTokenCounter;
        let tracker = PrefixTracker::with_capacity(2);
        let cause = |id: &str| tracker.observe(id, &ctx(), &counter).miss.map(|m| m.cause);
        assert_eq!(cause("a"), Some(MissCause::First));
        assert_eq!(cause("b"), Some(MissCause::First));
        assert_eq!(cause("a"), None, "a is remembered");
        assert_eq!(cause("c"), Some(MissCause::First));
        assert_eq!(tracker.len(), 2);
        assert_eq!(cause("a"), None, "a was used more recently than b");
        assert_eq!(cause("b"), Some(MissCause::First), "b was forgotten");
    }

    #[test]
    fn thousands_of_threads_keep_the_tracker_flat() {
        let counter = crate::tokens::DefaultTokenCounter;
        let tracker = PrefixTracker::new();
        for i in 0..5_000 {
            tracker.observe(&format!("thread-{i}"), &ctx(), &counter);
        }
        assert_eq!(tracker.len(), PrefixTracker::SESSIONS);
    }
}
