//! An injected embedder for recall: the host's model turns texts into
//! vectors, asked in batches told their role (the question searched with,
//! or the turns searched among). A turn's vector is cached by its event id,
//! a question's by its text, each at unit length so a cosine is a dot
//! product. A batch still running when its compile stops waiting stays in
//! flight: the next compile takes its answer instead of asking again.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::Poll;

use async_trait::async_trait;
use futures_util::future::{FutureExt, LocalBoxFuture, Shared};

use crate::clock::Clock;
use crate::error::{Error, ErrorCode, Result};

/// Texts sent to the embedder in one call at most.
pub const EMBED_BATCH: usize = 64;
/// Characters of a text the embedder is given at most (its start).
pub const EMBED_CHARS: usize = 2_000;
/// Batches asked of the embedder at once at most.
pub const EMBED_FLIGHTS: usize = 2;
/// Questions whose vectors are kept (all are forgotten past it).
const QUERIES_KEPT: usize = 256;
/// Turns whose vectors are kept (all are forgotten past it, and embedded
/// again when needed): about 150 MB of 384-dimension vectors.
const PASSAGES_KEPT: usize = 100_000;
/// Batches given up whose answers are still waited for, at most.
const LATE_KEPT: usize = 8;

/// What the texts of one batch are to the model. Models trained with a
/// prefix for each (e5's `query: ` and `passage: `, bge, nomic) embed a
/// question and the turns it should find differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EmbedRole {
    /// The text searched with: the newest user message (with the goal and
    /// the task state).
    Query,
    /// Texts searched among: the turns outside the window.
    Passage,
}

impl EmbedRole {
    /// `"query"` or `"passage"`.
    pub fn as_str(self) -> &'static str {
        match self {
            EmbedRole::Query => "query",
            EmbedRole::Passage => "passage",
        }
    }
}

/// Turns texts into vectors (one per text, all of one dimension).
#[async_trait(?Send)]
pub trait Embedder {
    /// The vectors of `texts`, in their order; every text of a call has
    /// the same `role`.
    async fn embed(&self, texts: &[String], role: EmbedRole) -> Result<Vec<Vec<f32>>>;
}

/// A batch's answer, shared by every compile waiting for it.
type Answer = std::result::Result<Rc<Vec<Vec<f32>>>, Error>;

/// A batch asked for and not yet taken into the cache.
struct Flight {
    role: EmbedRole,
    keys: Vec<String>,
    /// When it was asked for (on the cache's clock; 0 without one).
    since: f64,
    answer: Shared<LocalBoxFuture<'static, Answer>>,
}

/// Vectors by event id (turns) and by text (questions), and the batches
/// in flight.
#[derive(Default)]
pub struct EmbeddingCache {
    passages: RefCell<HashMap<String, Rc<[f32]>>>,
    queries: RefCell<HashMap<String, Rc<[f32]>>>,
    flights: RefCell<Vec<Flight>>,
    /// Batches given up, whose answers are still taken when they come.
    late: RefCell<Vec<Flight>>,
    dimension: Cell<Option<usize>>,
    asked: Cell<usize>,
    /// How long a batch may stay unanswered before it is given up and its
    /// texts asked for again, on which clock.
    patience: Option<(f64, Rc<dyn Clock>)>,
}

fn bad(message: String) -> Error {
    Error::new(ErrorCode::ProcessorFailed, message)
}

/// The start of `text` the embedder is given: its first [`EMBED_CHARS`]
/// characters (no walk when its bytes are fewer).
pub fn embedded_text(text: &str) -> &str {
    if text.len() <= EMBED_CHARS {
        return text;
    }
    match text.char_indices().nth(EMBED_CHARS) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

/// `v` at unit length (its norm taken in f64, so large finite numbers do
/// not overflow); a vector of norm 0 or one that is not finite is zeros.
fn unit(v: &[f32]) -> Rc<[f32]> {
    let norm = v
        .iter()
        .map(|x| f64::from(*x) * f64::from(*x))
        .sum::<f64>()
        .sqrt();
    if norm > 0.0 && norm.is_finite() {
        v.iter().map(|x| (f64::from(*x) / norm) as f32).collect()
    } else {
        v.iter().map(|_| 0.0).collect()
    }
}

/// The cosine of two unit vectors (0 when their dimensions differ).
pub fn unit_cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    a.iter()
        .zip(b)
        .map(|(x, y)| x * y)
        .sum::<f32>()
        .clamp(-1.0, 1.0)
}

impl EmbeddingCache {
    /// An empty cache.
    pub fn new() -> Self {
        EmbeddingCache::default()
    }

    /// A cache that gives up a batch unanswered after `ms` on `clock` (a
    /// promise that never settles would hold its place for good) and asks
    /// for its texts again.
    pub fn with_patience(mut self, ms: f64, clock: Rc<dyn Clock>) -> Self {
        self.patience = Some((ms, clock));
        self
    }

    /// Now on the cache's clock (0 without one).
    fn now(&self) -> f64 {
        self.patience.as_ref().map_or(0.0, |(_, c)| c.now_ms())
    }

    /// Vectors cached so far (turns and questions).
    pub fn len(&self) -> usize {
        self.passages.borrow().len() + self.queries.borrow().len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Texts asked of the embedder so far.
    pub fn asked(&self) -> usize {
        self.asked.get()
    }

    /// The cached vector of a turn (by event id) or a question (by text).
    pub fn cached(&self, role: EmbedRole, key: &str) -> Option<Rc<[f32]>> {
        match role {
            EmbedRole::Passage => self.passages.borrow().get(key).cloned(),
            EmbedRole::Query => self.queries.borrow().get(key).cloned(),
        }
    }

    /// Whether `key` is in a batch in flight.
    fn in_flight(&self, role: EmbedRole, key: &str) -> bool {
        self.flights
            .borrow()
            .iter()
            .any(|f| f.role == role && f.keys.iter().any(|k| k == key))
    }

    /// Moves the batches unanswered past the patience out of flight:
    /// their texts are asked for again, and their answers are still taken
    /// when they come.
    fn give_up_stale(&self) {
        let Some((ms, _)) = &self.patience else {
            return;
        };
        let given_up = self.now() - ms;
        let (stale, fresh): (Vec<Flight>, Vec<Flight>) =
            std::mem::take(&mut *self.flights.borrow_mut())
                .into_iter()
                .partition(|f| f.since < given_up);
        *self.flights.borrow_mut() = fresh;
        let mut late = self.late.borrow_mut();
        late.extend(stale);
        let over = late.len().saturating_sub(LATE_KEPT);
        late.drain(..over);
    }

    /// Makes sure each of `wanted` (a key and its text) is cached: texts
    /// neither cached nor in flight are asked of `embedder` in batches of
    /// [`EMBED_BATCH`], at most [`EMBED_FLIGHTS`] at once, and batches
    /// already in flight are waited for. A future dropped while waiting
    /// leaves its batches in flight for the next call. An answer of the
    /// wrong length, with a number that is not finite or of another
    /// dimension than the rest is an error for the calls that wait for one
    /// of its texts, and nothing of it is cached.
    pub async fn fill<'t>(
        &self,
        embedder: &Rc<dyn Embedder>,
        role: EmbedRole,
        wanted: impl IntoIterator<Item = (String, &'t str)>,
    ) -> Result<()> {
        self.give_up_stale();
        let mut keys: HashSet<String> = HashSet::new();
        let mut texts: Vec<(String, String)> = Vec::new();
        for (key, text) in wanted {
            if self.cached(role, &key).is_none() && keys.insert(key.clone()) {
                texts.push((key, embedded_text(text).to_string()));
            }
        }
        loop {
            self.take_answers(role, &keys)?;
            texts.retain(|(k, _)| self.cached(role, k).is_none());
            if texts.is_empty() {
                return Ok(());
            }
            // What no batch holds (a batch given up, or one that failed
            // for another caller) is asked for while there is room.
            let missing: Vec<(String, String)> = texts
                .iter()
                .filter(|(k, _)| !self.in_flight(role, k))
                .cloned()
                .collect();
            let mut missing = missing.into_iter().peekable();
            while self.flights.borrow().len() < EMBED_FLIGHTS && missing.peek().is_some() {
                let batch: Vec<(String, String)> = missing.by_ref().take(EMBED_BATCH).collect();
                self.launch(embedder, role, batch);
            }
            // Batches given up are polled too: their answers still count.
            let waiting: Vec<_> = [&self.flights, &self.late]
                .iter()
                .flat_map(|list| {
                    list.borrow()
                        .iter()
                        .map(|f| f.answer.clone())
                        .collect::<Vec<_>>()
                })
                .collect();
            if self.flights.borrow().is_empty() {
                return Err(bad("an embedding went missing".into()));
            }
            any_of(waiting).await;
        }
    }

    /// Puts a batch in flight.
    fn launch(&self, embedder: &Rc<dyn Embedder>, role: EmbedRole, batch: Vec<(String, String)>) {
        let (keys, texts): (Vec<String>, Vec<String>) = batch.into_iter().unzip();
        self.asked.set(self.asked.get() + texts.len());
        let embedder = embedder.clone();
        let answer = async move {
            let vectors = embedder.embed(&texts, role).await?;
            if vectors.len() != texts.len() {
                return Err(bad(format!(
                    "the embedder returned {} vectors for {} texts",
                    vectors.len(),
                    texts.len()
                )));
            }
            Ok(Rc::new(vectors))
        }
        .boxed_local()
        .shared();
        let since = self.now();
        self.flights.borrow_mut().push(Flight {
            role,
            keys,
            since,
            answer,
        });
    }

    /// Caches the answers of the batches that came back (those given up
    /// too). The error is the first of a batch that held one of `keys`
    /// (as `role`) and failed: another caller's failure is not this one's,
    /// and its texts are asked for again by whoever needs them.
    fn take_answers(&self, role: EmbedRole, keys: &HashSet<String>) -> Result<()> {
        let settled = |list: &RefCell<Vec<Flight>>| {
            let mut list = list.borrow_mut();
            let (done, running): (Vec<Flight>, Vec<Flight>) = std::mem::take(&mut *list)
                .into_iter()
                .partition(|f| f.answer.peek().is_some());
            *list = running;
            done
        };
        let mut done = settled(&self.flights);
        done.extend(settled(&self.late));
        let mut failed = None;
        for flight in done {
            let stored = match flight.answer.peek() {
                Some(Ok(vectors)) => self.store(flight.role, &flight.keys, vectors),
                Some(Err(e)) => Err(e.clone()),
                None => Ok(()),
            };
            let ours = flight.role == role && flight.keys.iter().any(|k| keys.contains(k));
            if let (Err(e), true) = (stored, ours) {
                failed.get_or_insert(e);
            }
        }
        failed.map_or(Ok(()), Err)
    }

    /// Caches one batch's vectors, all or none.
    fn store(&self, role: EmbedRole, keys: &[String], vectors: &[Vec<f32>]) -> Result<()> {
        let mut dimension = self.dimension.get();
        for v in vectors {
            if v.is_empty() || v.iter().any(|x| !x.is_finite()) {
                return Err(bad(
                    "the embedder returned an empty vector or one with a number that is not finite"
                        .into(),
                ));
            }
            if *dimension.get_or_insert(v.len()) != v.len() {
                return Err(bad(format!(
                    "the embedder returned vectors of {} and {} dimensions",
                    dimension.unwrap_or(0),
                    v.len()
                )));
            }
        }
        self.dimension.set(dimension);
        let mut cache = match role {
            EmbedRole::Passage => self.passages.borrow_mut(),
            EmbedRole::Query => self.queries.borrow_mut(),
        };
        let kept = match role {
            EmbedRole::Query => QUERIES_KEPT,
            EmbedRole::Passage => PASSAGES_KEPT,
        };
        if cache.len() + keys.len() > kept {
            cache.clear();
        }
        for (key, v) in keys.iter().zip(vectors) {
            cache.insert(key.clone(), unit(v));
        }
        Ok(())
    }
}

/// Ready when any of `answers` is.
async fn any_of(mut answers: Vec<Shared<LocalBoxFuture<'static, Answer>>>) {
    std::future::poll_fn(|cx| {
        for answer in answers.iter_mut() {
            if Pin::new(answer).poll(cx).is_ready() {
                return Poll::Ready(());
            }
        }
        Poll::Pending
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers `answer` for any texts, counting the calls and the roles.
    struct Fixed {
        answer: Vec<Vec<f32>>,
        calls: Cell<usize>,
        roles: RefCell<Vec<EmbedRole>>,
    }

    fn fixed(answer: Vec<Vec<f32>>) -> Rc<Fixed> {
        Rc::new(Fixed {
            answer,
            calls: Cell::new(0),
            roles: RefCell::new(Vec::new()),
        })
    }

    #[async_trait(?Send)]
    impl Embedder for Fixed {
        async fn embed(&self, texts: &[String], role: EmbedRole) -> Result<Vec<Vec<f32>>> {
            self.calls.set(self.calls.get() + 1);
            self.roles.borrow_mut().push(role);
            Ok(self
                .answer
                .iter()
                .cycle()
                .take(texts.len())
                .cloned()
                .collect())
        }
    }

    fn run<T>(f: impl std::future::Future<Output = T>) -> T {
        pollster::block_on(f)
    }

    /// Polls `fill` once and gives up on it, as a compile past its
    /// deadline does.
    fn give_up(fill: impl std::future::Future<Output = Result<()>>) {
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        assert!(std::pin::pin!(fill).poll(&mut cx).is_pending());
    }

    /// A cache patient for 100 ms on a clock moved by hand.
    fn patient() -> (Rc<Hand>, EmbeddingCache) {
        let clock = Rc::new(Hand(Cell::new(0.0)));
        let cache = EmbeddingCache::new().with_patience(100.0, clock.clone());
        (clock, cache)
    }

    fn keyed(texts: &[String]) -> Vec<(String, &str)> {
        texts.iter().map(|t| (t.clone(), t.as_str())).collect()
    }

    #[test]
    fn bad_answers_are_errors_and_nothing_of_them_is_cached() {
        let texts = vec!["a".to_string(), "b".to_string()];
        for answer in [
            vec![vec![f32::NAN, 1.0]],
            vec![vec![]],
            vec![vec![1.0, 2.0], vec![1.0]],
        ] {
            let cache = EmbeddingCache::new();
            let e: Rc<dyn Embedder> = fixed(answer);
            let err = run(cache.fill(&e, EmbedRole::Passage, keyed(&texts))).unwrap_err();
            assert_eq!(err.code(), ErrorCode::ProcessorFailed);
            assert!(cache.is_empty());
        }
        struct Short;
        #[async_trait(?Send)]
        impl Embedder for Short {
            async fn embed(&self, _texts: &[String], _role: EmbedRole) -> Result<Vec<Vec<f32>>> {
                Ok(vec![vec![1.0]])
            }
        }
        let cache = EmbeddingCache::new();
        let e: Rc<dyn Embedder> = Rc::new(Short);
        assert!(run(cache.fill(&e, EmbedRole::Passage, keyed(&texts))).is_err());
        assert!(cache.is_empty());
    }

    #[test]
    fn texts_are_embedded_once_in_batches_told_their_role() {
        let cache = EmbeddingCache::new();
        let e = fixed(vec![vec![3.0, 4.0]]);
        let dyn_e: Rc<dyn Embedder> = e.clone();
        let texts: Vec<String> = (0..150).map(|i| format!("text {i}")).collect();
        run(cache.fill(&dyn_e, EmbedRole::Passage, keyed(&texts))).unwrap();
        assert_eq!(e.calls.get(), 3);
        run(cache.fill(&dyn_e, EmbedRole::Passage, keyed(&texts[..10]))).unwrap();
        assert_eq!(e.calls.get(), 3);
        assert_eq!(cache.len(), 150);
        assert_eq!(cache.asked(), 150);
        // The same text as a question is another vector, asked as one.
        run(cache.fill(&dyn_e, EmbedRole::Query, keyed(&texts[..1]))).unwrap();
        assert_eq!(e.calls.get(), 4);
        assert_eq!(
            *e.roles.borrow(),
            [
                EmbedRole::Passage,
                EmbedRole::Passage,
                EmbedRole::Passage,
                EmbedRole::Query
            ]
        );
        // Kept at unit length: the cosine is the dot product.
        let v = cache.cached(EmbedRole::Passage, "text 0").unwrap();
        assert_eq!(&*v, &[0.6, 0.8]);
        assert!((unit_cosine(&v, &v) - 1.0).abs() < 1e-6);
    }

    #[test]
    fn a_text_is_cut_after_its_first_characters_without_a_walk_when_short() {
        assert_eq!(embedded_text("short"), "short");
        let long = "é".repeat(EMBED_CHARS + 5);
        assert_eq!(embedded_text(&long).chars().count(), EMBED_CHARS);
        let exact = "a".repeat(EMBED_CHARS);
        assert_eq!(embedded_text(&exact), exact);
    }

    /// Answers after being polled `polls` times, counting the texts.
    struct Slow {
        polls: usize,
        texts: Cell<usize>,
        at_once: Cell<usize>,
        most_at_once: Cell<usize>,
    }

    #[async_trait(?Send)]
    impl Embedder for Slow {
        async fn embed(&self, texts: &[String], _role: EmbedRole) -> Result<Vec<Vec<f32>>> {
            self.texts.set(self.texts.get() + texts.len());
            self.at_once.set(self.at_once.get() + 1);
            self.most_at_once
                .set(self.most_at_once.get().max(self.at_once.get()));
            for _ in 0..self.polls {
                crate::join::yield_now().await;
            }
            self.at_once.set(self.at_once.get() - 1);
            Ok(texts.iter().map(|_| vec![1.0, 0.0]).collect())
        }
    }

    #[test]
    fn a_batch_in_flight_when_its_caller_gives_up_is_kept_not_asked_again() {
        let cache = EmbeddingCache::new();
        let slow = Rc::new(Slow {
            polls: 3,
            texts: Cell::new(0),
            at_once: Cell::new(0),
            most_at_once: Cell::new(0),
        });
        let e: Rc<dyn Embedder> = slow.clone();
        let texts: Vec<String> = (0..300).map(|i| format!("t{i}")).collect();
        // Gives up after one poll, three times over: the batches started
        // stay in flight and are not asked for again.
        for _ in 0..3 {
            give_up(cache.fill(&e, EmbedRole::Passage, keyed(&texts)));
        }
        run(cache.fill(&e, EmbedRole::Passage, keyed(&texts))).unwrap();
        assert_eq!(slow.texts.get(), 300);
        assert_eq!(cache.asked(), 300);
        assert_eq!(slow.most_at_once.get(), EMBED_FLIGHTS);
        assert_eq!(cache.len(), 300);
    }

    /// A clock moved by hand.
    struct Hand(Cell<f64>);

    #[async_trait(?Send)]
    impl Clock for Hand {
        fn now_ms(&self) -> f64 {
            self.0.get()
        }
        async fn sleep(&self, _ms: f64) {}
    }

    /// Never answers its first `hangs` calls; answers the rest.
    struct Hangs {
        hangs: Cell<usize>,
        texts: Cell<usize>,
    }

    #[async_trait(?Send)]
    impl Embedder for Hangs {
        async fn embed(&self, texts: &[String], _role: EmbedRole) -> Result<Vec<Vec<f32>>> {
            self.texts.set(self.texts.get() + texts.len());
            if self.hangs.get() > 0 {
                self.hangs.set(self.hangs.get() - 1);
                std::future::pending::<()>().await;
            }
            Ok(texts.iter().map(|_| vec![1.0]).collect())
        }
    }

    #[test]
    fn a_batch_that_never_answers_is_given_up_after_the_patience() {
        let (clock, cache) = patient();
        let hangs = Rc::new(Hangs {
            hangs: Cell::new(1),
            texts: Cell::new(0),
        });
        let e: Rc<dyn Embedder> = hangs.clone();
        let texts = vec!["a".to_string()];
        give_up(cache.fill(&e, EmbedRole::Passage, keyed(&texts)));
        // Within the patience the batch is waited for, not asked again.
        clock.0.set(100.0);
        give_up(cache.fill(&e, EmbedRole::Passage, keyed(&texts)));
        assert_eq!(hangs.texts.get(), 1);
        // Past it, the text is asked for again, and answered.
        clock.0.set(100.5);
        run(cache.fill(&e, EmbedRole::Passage, keyed(&texts))).unwrap();
        assert_eq!(hangs.texts.get(), 2);
        assert!(cache.cached(EmbedRole::Passage, "a").is_some());
    }

    #[test]
    fn a_vector_of_large_finite_numbers_is_put_at_unit_length() {
        assert_eq!(&*unit(&[3e19, 4e19]), &[0.6, 0.8]);
        assert_eq!(&*unit(&[0.0, 0.0]), &[0.0, 0.0]);
    }

    /// Fails every text with "bad" in it, after one poll; answers the rest.
    struct Picky;

    #[async_trait(?Send)]
    impl Embedder for Picky {
        async fn embed(&self, texts: &[String], _role: EmbedRole) -> Result<Vec<Vec<f32>>> {
            crate::join::yield_now().await;
            if texts.iter().any(|t| t.contains("bad")) {
                return Err(bad("the model is overloaded".into()));
            }
            Ok(texts.iter().map(|_| vec![1.0]).collect())
        }
    }

    #[test]
    fn another_callers_failed_batch_is_not_this_callers_error() {
        let cache = EmbeddingCache::new();
        let e: Rc<dyn Embedder> = Rc::new(Picky);
        let bad_texts = vec!["bad one".to_string()];
        let good_texts = vec!["good one".to_string()];
        // The failing batch is left in flight by a caller that gave up.
        give_up(cache.fill(&e, EmbedRole::Passage, keyed(&bad_texts)));
        // Another caller sees it fail while it waits, and is not failed by it.
        run(cache.fill(&e, EmbedRole::Passage, keyed(&good_texts))).unwrap();
        assert!(cache.cached(EmbedRole::Passage, "good one").is_some());
        // The text that failed is asked for again by the caller needing it.
        let err = run(cache.fill(&e, EmbedRole::Passage, keyed(&bad_texts))).unwrap_err();
        assert!(err.message().contains("overloaded"), "{err:?}");
    }

    /// Answers its first call after three polls; never answers the others.
    struct FirstLate {
        calls: Cell<usize>,
    }

    #[async_trait(?Send)]
    impl Embedder for FirstLate {
        async fn embed(&self, texts: &[String], _role: EmbedRole) -> Result<Vec<Vec<f32>>> {
            self.calls.set(self.calls.get() + 1);
            if self.calls.get() > 1 {
                std::future::pending::<()>().await;
            }
            for _ in 0..3 {
                crate::join::yield_now().await;
            }
            Ok(texts.iter().map(|_| vec![2.0]).collect())
        }
    }

    #[test]
    fn a_batch_given_up_still_answers_when_it_comes() {
        let (clock, cache) = patient();
        let late = Rc::new(FirstLate {
            calls: Cell::new(0),
        });
        let e: Rc<dyn Embedder> = late.clone();
        let texts = vec!["a".to_string()];
        give_up(cache.fill(&e, EmbedRole::Passage, keyed(&texts)));
        // Given up and asked again; the second ask never answers, the
        // first's answer is taken when it comes.
        clock.0.set(150.0);
        run(cache.fill(&e, EmbedRole::Passage, keyed(&texts))).unwrap();
        assert_eq!(late.calls.get(), 2);
        assert_eq!(&*cache.cached(EmbedRole::Passage, "a").unwrap(), &[1.0]);
    }
}
