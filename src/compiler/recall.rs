//! History recall: on each compile, the turns that left the window (evicted,
//! folded into a summary, masked) and bear on the newest user message come
//! back, in the RECENT zone's tail, so the cached prefix is untouched.

use context_compiler_text::order::{descending, float_descending, sort_stable_by_key};
use std::collections::{BTreeMap, HashSet};
use std::rc::Rc;

use async_trait::async_trait;

use crate::artifacts::ArtifactStore;
use crate::clock::Clock;
use crate::compiler::excerpt::tool_excerpt;
use crate::compiler::processor::{Processor, SessionWrites};
use crate::error::Result;
use crate::race::{race, First};
use crate::recall::embedder::{embedded_text, unit_cosine, EmbedRole, Embedder, EmbeddingCache};
use crate::recall::{event_text, Terms};
use crate::session::render::{render, Rendered};
use crate::session::Session;
use crate::session::SessionEvent;
use crate::tokens::truncate_to_tokens;
use crate::working_context::{Layout, RecalledTurn, WorkingContext};

/// The share of the budget recalled turns may take by default.
pub const DEFAULT_RECALL_SHARE: f64 = 0.5;
/// Matching turns recalled at most by default (the share of the budget
/// is usually the tighter bound).
pub const DEFAULT_RECALL_MATCHES: usize = 100;
/// Turns on each side of a match brought with it by default (twice as many
/// after a strong match: see [`HistoryRecall::with_neighbours`]).
pub const DEFAULT_RECALL_NEIGHBOURS: usize = 1;
/// The relevance (see [`crate::recall::SearchHit::relevance`]) a match
/// needs by default: none (any threshold tried so far cost more recall on
/// conversations than it saved prompt cache on tool loops).
pub const DEFAULT_RECALL_RELEVANCE: f64 = 0.0;
/// The distinction (see [`crate::recall::SearchHit::distinction`]) one
/// match outside the window needs by default for anything to be recalled:
/// a message pointing at nothing in particular keeps the prompt cache.
pub const DEFAULT_RECALL_DISTINCTION: f64 = 4.0;
/// The share of the best match's score a match needs to bring its
/// neighbours along.
const NEIGHBOURS_FROM: f64 = 0.5;
/// The share of the best match's score a match needs to bring twice as
/// many turns after it as before (see [`HistoryRecall::with_neighbours`]).
const FOLLOWERS_FROM: f64 = 0.75;
/// Timeouts a batch of the embedder may stay unanswered before it is given
/// up and asked for again.
pub const EMBED_PATIENCE: f64 = 3.0;
/// Tokens a recalled turn keeps by default (its start; the rest is cut).
pub const DEFAULT_RECALLED_TURN_TOKENS: u64 = 400;
/// How long the bindings let a compile wait for the embedder by default
/// (milliseconds) before it recalls lexically.
pub const DEFAULT_EMBEDDER_TIMEOUT_MS: f64 = 10_000.0;

/// Searches the session (see [`Session::search`]) with the newest user
/// message, the goal and the task state, and adds the best matching turns
/// that are not in the window, each with its neighbours, oldest first, as
/// [`WorkingContext::recalled`]: at most `share` of the budget and never
/// more than the window leaves, each turn cut after `turn_tokens`, a tool
/// output shown as its lines that match (with the event id `read_artifact`
/// reads it whole by). Query terms leave out English function words. Deterministic; the zoned layout only (the
/// single-system layout has no per-turn tail: there it adds nothing).
#[derive(Clone)]
pub struct HistoryRecall {
    share: f64,
    relevance: f64,
    distinction: f64,
    matches: usize,
    neighbours: usize,
    turn_tokens: u64,
    embedder: Option<Rc<dyn Embedder>>,
    /// How long a compile waits for the embedder, on which clock.
    embedder_deadline: Option<(f64, Rc<dyn Clock>)>,
    cache: Rc<EmbeddingCache>,
    /// Where the outputs the session stored are, to index them whole.
    artifacts: Option<Rc<dyn ArtifactStore>>,
}

impl std::fmt::Debug for HistoryRecall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HistoryRecall")
            .field("share", &self.share)
            .field("relevance", &self.relevance)
            .field("distinction", &self.distinction)
            .field("matches", &self.matches)
            .field("neighbours", &self.neighbours)
            .field("turn_tokens", &self.turn_tokens)
            .field("embedder", &self.embedder.is_some())
            .field("artifacts", &self.artifacts.is_some())
            .field(
                "embedder_timeout_ms",
                &self.embedder_deadline.as_ref().map(|(ms, _)| *ms),
            )
            .finish()
    }
}

impl Default for HistoryRecall {
    fn default() -> Self {
        HistoryRecall {
            share: DEFAULT_RECALL_SHARE,
            relevance: DEFAULT_RECALL_RELEVANCE,
            distinction: DEFAULT_RECALL_DISTINCTION,
            matches: DEFAULT_RECALL_MATCHES,
            neighbours: DEFAULT_RECALL_NEIGHBOURS,
            turn_tokens: DEFAULT_RECALLED_TURN_TOKENS,
            embedder: None,
            embedder_deadline: None,
            artifacts: None,
            cache: Rc::new(EmbeddingCache::new()),
        }
    }
}

/// `value` within `min`–`max`; `nan` when it is not a number.
fn clamped(value: f64, min: f64, max: f64, nan: f64) -> f64 {
    if value.is_nan() {
        nan
    } else {
        value.clamp(min, max)
    }
}

impl HistoryRecall {
    /// Recall with the defaults.
    pub fn new() -> Self {
        HistoryRecall::default()
    }

    /// The share of the budget recalled turns may take (clamped to 0–1).
    pub fn with_share(mut self, share: f64) -> Self {
        self.share = clamped(share, 0.0, 1.0, 0.0);
        self
    }

    /// The relevance a match needs (0 to 1; see
    /// [`crate::recall::SearchHit::relevance`]).
    pub fn with_relevance(mut self, relevance: f64) -> Self {
        self.relevance = clamped(relevance, 0.0, 1.0, DEFAULT_RECALL_RELEVANCE);
        self
    }

    /// The distinction one match outside the window needs for anything to
    /// be recalled (robust standard deviations, 0 to 100; see
    /// [`crate::recall::SearchHit::distinction`]).
    pub fn with_distinction(mut self, distinction: f64) -> Self {
        self.distinction = clamped(distinction, 0.0, 100.0, DEFAULT_RECALL_DISTINCTION);
        self
    }

    /// Matching turns recalled at most (at most 100).
    pub fn with_matches(mut self, matches: usize) -> Self {
        self.matches = matches.min(crate::recall::MAX_SEARCH_LIMIT);
        self
    }

    /// Turns on each side of a match brought with it (a match scoring at
    /// least half the best), and twice as many after a strong match (three
    /// quarters of the best): what follows a match is what it led to (the
    /// answer to a question, the result of a call, the rest of a story). On
    /// LoCoMo's development half this recalled 0.773 / 0.825 / 0.881 of the
    /// evidence at 4k / 8k / 16k tokens; one on each side of every match
    /// 0.758 / 0.815 / 0.877; two after every match 0.767 / 0.825 / 0.885,
    /// which cost the tool loop's prefix reuse more.
    pub fn with_neighbours(mut self, neighbours: usize) -> Self {
        self.neighbours = neighbours.min(8);
        self
    }

    /// Ranks also by meaning: `embedder`'s vectors of the question and of
    /// every turn outside the window (the question as a query, the turns as
    /// passages, each turn embedded once and cached by event id, asked in
    /// batches by the compile that needs them), their
    /// cosine ranking fused with the lexical one by reciprocal rank (k =
    /// 20). A compile whose embedder fails recalls lexically. The vectors
    /// of another embedder given before are forgotten.
    pub fn with_embedder(mut self, embedder: Rc<dyn Embedder>) -> Self {
        self.embedder = Some(embedder);
        self.cache = self.new_cache();
        self
    }

    /// An empty cache, patient for [`EMBED_PATIENCE`] timeouts when a
    /// compile has one.
    fn new_cache(&self) -> Rc<EmbeddingCache> {
        Rc::new(match &self.embedder_deadline {
            Some((ms, clock)) => {
                EmbeddingCache::new().with_patience(ms * EMBED_PATIENCE, clock.clone())
            }
            None => EmbeddingCache::new(),
        })
    }

    /// Reads from `store` the tool outputs the session stored there (whose
    /// events hold only a summary) and indexes them whole before searching
    /// (see [`Session::index_stored_outputs`]): each once, so a loaded
    /// session finds them by any part as the one that stored them did.
    pub fn with_artifacts(mut self, store: Rc<dyn ArtifactStore>) -> Self {
        self.artifacts = Some(store);
        self
    }

    /// How long a compile waits for the embedder, timed by `clock`: past
    /// `timeout_ms` it recalls lexically. The batches still running stay in
    /// flight, and the next compile takes their answers rather than asking
    /// again; one unanswered after three timeouts is given up
    /// and asked for again. Without it a compile waits as long as
    /// the embedder takes, forever for one that never answers.
    pub fn with_embedder_timeout(mut self, timeout_ms: f64, clock: Rc<dyn Clock>) -> Self {
        self.embedder_deadline = Some((clamped(timeout_ms, 0.0, f64::MAX, 0.0), clock));
        self.cache = self.new_cache();
        self
    }

    /// Tokens a recalled turn keeps (its start).
    pub fn with_turn_tokens(mut self, tokens: u64) -> Self {
        self.turn_tokens = tokens.max(16);
        self
    }
}

/// The role and text a conversation event shows when recalled: a message
/// as said, a tool output as the lines of it that match `query` (with the
/// event id `read_artifact` reads it whole by), a stored output as its
/// handle and summary.
fn recallable(terms: &Terms, query: &str, event: &SessionEvent) -> Option<(String, String)> {
    match render(&event.kind, &event.data)? {
        Rendered::Message { role, content } => Some((role.into_owned(), content.into_owned())),
        Rendered::ToolOutcome { tool, result } => Some((
            "tool".to_string(),
            tool_excerpt(terms, query, &tool, &event.event_id, &result),
        )),
        Rendered::Artifact(a) => {
            Some(("tool".to_string(), format!("[{}] {}", a.handle, a.summary)))
        }
    }
}

/// Reciprocal rank fusion's constant.
const RRF_K: f64 = 20.0;

/// The turns outside the window ranked by meaning, and how far the best
/// stands out.
struct Semantic {
    ranked: Vec<(usize, f64)>,
    distinction: f64,
}

/// Ranks `candidates` (positions in `events`) by the cosine of their
/// vectors with the query's: the query embedded as one, the turns as
/// passages, each turn once (its vector cached by event id, so a compile
/// renders only the turns not embedded yet).
async fn semantic_ranking(
    embedder: &Rc<dyn Embedder>,
    cache: &EmbeddingCache,
    query: &str,
    events: &[SessionEvent],
    candidates: &[usize],
) -> Result<Semantic> {
    // Kept by the text the embedder is given; read at once (another
    // compile's question may push it out while the turns are embedded).
    let key = embedded_text(query);
    cache
        .fill(embedder, EmbedRole::Query, [(key.to_string(), key)])
        .await?;
    let Some(question) = cache.cached(EmbedRole::Query, key) else {
        return Ok(Semantic {
            ranked: Vec::new(),
            distinction: 0.0,
        });
    };
    let missing: Vec<(String, std::borrow::Cow<'_, str>)> = candidates
        .iter()
        .filter_map(|&p| events.get(p))
        .filter(|e| cache.cached(EmbedRole::Passage, &e.event_id).is_none())
        .filter_map(|e| Some((e.event_id.clone(), event_text(e)?)))
        .collect();
    cache
        .fill(
            embedder,
            EmbedRole::Passage,
            missing.iter().map(|(id, t)| (id.clone(), t.as_ref())),
        )
        .await?;
    let mut ranked: Vec<(usize, f64)> = candidates
        .iter()
        .filter_map(|&p| {
            let v = cache.cached(EmbedRole::Passage, &events.get(p)?.event_id)?;
            Some((p, f64::from(unit_cosine(&question, &v))))
        })
        .collect();
    sort_stable_by_key(&mut ranked, |(p, c)| {
        (float_descending(*c), descending(*p as u64))
    });
    let similarities: Vec<f64> = ranked.iter().map(|(_, c)| *c).collect();
    let distinction = ranked.first().map_or(0.0, |(_, best)| {
        crate::recall::stats::standing_out(*best, &similarities)
    });
    ranked.truncate(crate::recall::MAX_SEARCH_LIMIT);
    Ok(Semantic {
        ranked,
        distinction,
    })
}

/// Reciprocal rank fusion of two rankings of positions: each position
/// scores the sum of 1 / (k + rank) over the rankings holding it.
fn fuse(lexical: &[(usize, f64)], semantic: &[(usize, f64)]) -> Vec<(usize, f64)> {
    let mut fused: BTreeMap<usize, f64> = BTreeMap::new();
    for ranking in [lexical, semantic] {
        for (rank, (position, _)) in ranking.iter().enumerate() {
            *fused.entry(*position).or_default() += 1.0 / (RRF_K + rank as f64 + 1.0);
        }
    }
    let mut out: Vec<(usize, f64)> = fused.into_iter().collect();
    sort_stable_by_key(&mut out, |(p, c)| {
        (float_descending(*c), descending(*p as u64))
    });
    out
}

#[async_trait(?Send)]
impl Processor for HistoryRecall {
    fn name(&self) -> &str {
        "history_recall"
    }

    async fn process(
        &self,
        session: &Session,
        mut ctx: WorkingContext,
        budget: u64,
        _writes: &mut SessionWrites,
    ) -> Result<WorkingContext> {
        if ctx.layout != Layout::Zoned || self.matches == 0 {
            return Ok(ctx);
        }
        let Some(question) = ctx.history.iter().rev().find(|h| h.role == "user") else {
            return Ok(ctx);
        };
        let mut query = question.content.clone();
        for extra in [ctx.goal.as_deref(), ctx.task_state.as_deref()]
            .into_iter()
            .flatten()
        {
            query.push('\n');
            query.push_str(extra);
        }
        // What the window shows whole: those events are not recalled.
        let shown: HashSet<&str> = ctx
            .history
            .iter()
            .filter(|h| !h.masked)
            .filter_map(|h| h.event_id.as_deref())
            .collect();
        if let Some(store) = &self.artifacts {
            session.index_stored_outputs(store.as_ref()).await;
        }
        let log = session.event_log();
        let events = log.all_events();
        let hits = session.search(&query, crate::recall::MAX_SEARCH_LIMIT);
        let eligible = |position: usize| {
            events.get(position).is_some_and(|e| {
                !shown.contains(e.event_id.as_str()) && render(&e.kind, &e.data).is_some()
            })
        };
        // A query that points at nothing in particular outside the window
        // (no match there stands out from the rest) recalls nothing.
        let mut stands_out = hits
            .iter()
            .any(|h| h.distinction >= self.distinction && eligible(h.position));
        // Ranked with the query widened by what its best matches speak of;
        // whether anything stands out is the query's own.
        let widened = session.search_expanded(&query, crate::recall::MAX_SEARCH_LIMIT);
        let mut ranked: Vec<(usize, f64)> = widened
            .iter()
            .filter(|h| h.relevance >= self.relevance && eligible(h.position))
            .map(|h| (h.position, h.score))
            .collect();
        // Neighbours are decided on the lexical score, whose scale does not
        // change when an embedder's ranking is fused in.
        let lexical: std::collections::HashMap<usize, f64> = ranked.iter().copied().collect();
        let best_lexical = ranked.first().map_or(0.0, |r| r.1);
        if let Some(embedder) = &self.embedder {
            let candidates: Vec<usize> = (0..events.len()).filter(|p| eligible(*p)).collect();
            // An embedder that fails, or is too slow, leaves this compile's
            // recall lexical.
            let ranking = semantic_ranking(embedder, &self.cache, &query, &events, &candidates);
            let semantic = match &self.embedder_deadline {
                Some((ms, clock)) => match race(ranking, clock.sleep(*ms)).await {
                    First::Left(semantic) => semantic.ok(),
                    First::Right(()) => None,
                },
                None => ranking.await.ok(),
            };
            if let Some(semantic) = semantic {
                stands_out |= semantic.distinction >= self.distinction;
                ranked = fuse(&ranked, &semantic.ranked);
            }
        }
        if !stands_out {
            return Ok(ctx);
        }
        // Position → score, in priority order: each match (best first)
        // followed by its neighbours (score 0) when it scores at least
        // NEIGHBOURS_FROM of the best.
        let mut chosen: BTreeMap<usize, f64> = BTreeMap::new();
        let mut order: Vec<usize> = Vec::new();
        for &(position, score) in ranked.iter().take(self.matches) {
            if chosen.insert(position, score).is_none() {
                order.push(position);
            } else {
                // Brought earlier as a neighbour: it is a match too.
                chosen.insert(position, score);
            }
            // A weak match is likely a stray word: its neighbours more so.
            // (No lexical match at all: none brings any.)
            let strength = lexical.get(&position).copied().unwrap_or(0.0);
            if best_lexical <= 0.0 || strength < best_lexical * NEIGHBOURS_FROM {
                continue;
            }
            let from = position.saturating_sub(self.neighbours);
            // A strong match brings twice as many turns after it as before.
            let after = if strength >= best_lexical * FOLLOWERS_FROM {
                2 * self.neighbours
            } else {
                self.neighbours
            };
            for p in from..=position.saturating_add(after) {
                if p != position && eligible(p) && !chosen.contains_key(&p) {
                    chosen.insert(p, 0.0);
                    order.push(p);
                }
            }
        }
        // Within the share of the budget, in priority order; shown oldest first.
        let counter = log.counter();
        // The share of the budget, and never more than the room the window
        // leaves: what the window holds is not pushed out (and compaction,
        // which ran before, never sees what is recalled).
        let window = ctx.measure(counter);
        let allowed = ((budget as f64 * self.share) as u64).min(budget.saturating_sub(window));
        let terms = Terms::new();
        let mut used = 0u64;
        let mut kept: BTreeMap<usize, RecalledTurn> = BTreeMap::new();
        let mut by_priority: Vec<usize> = Vec::new();
        for position in order {
            let Some(event) = events.get(position) else {
                continue;
            };
            let Some((role, text)) = recallable(&terms, &query, event) else {
                continue;
            };
            let content = truncate_to_tokens(counter, &text, self.turn_tokens);
            let turn = RecalledTurn {
                event_id: event.event_id.clone(),
                position,
                role,
                content,
                timestamp: event.timestamp,
                score: chosen.get(&position).copied().unwrap_or(0.0),
            };
            let cost = counter.count(&crate::working_context::recalled_line(&turn)) + 1;
            if used + cost > allowed {
                continue;
            }
            used += cost;
            kept.insert(position, turn);
            by_priority.push(position);
        }
        // The lines' counts leave out the section's heading and the tail
        // message: the least wanted turns go until the whole fits too.
        ctx.recalled = kept.values().cloned().collect();
        while ctx.measure(counter) > window + allowed {
            let Some(position) = by_priority.pop() else {
                break;
            };
            kept.remove(&position);
            ctx.recalled = kept.values().cloned().collect();
        }
        Ok(ctx)
    }
}
