//! The event bus: an in-process async bus that reacts to session
//! events, with error isolation, a bounded queue and drain on stop.
//!
//! [`EventBus::emit`] never blocks and never fails: it queues the event, or
//! drops it when the queue is full and says so (`false`). [`EventBus::run`]
//! is the background loop a binding spawns once the bus is started: it
//! dispatches events in FIFO order, each to the persister first and then to
//! every handler of its type concurrently. A handler's error, or its time
//! running out, is counted and reported, and never reaches the other
//! handlers or the bus. [`EventBus::stop`] lets the loop drain the queue
//! before it ends.

mod answer;
pub(crate) mod event;
mod facts;
mod feed;
mod interrupt;
mod monitor;
mod sleep;
mod stats;
mod subscription;
mod summarizer;

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::task::{Poll, Waker};

use crate::join::{join_all, LocalFuture};

use async_trait::async_trait;

pub use answer::{parse_json_array, parse_json_object};
pub use event::BusEvent;
pub use facts::{
    fact_key, FactExtractor, FactExtractorOptions, Similarity, EXTRACT_PROMPT, FACT_SOURCE,
};
pub use feed::{feed_event, session_feed, FeedOptions};
pub use interrupt::Interrupt;
pub use monitor::{MonitorOptions, SessionTimeoutMonitor, ASSISTANT_TRANSCRIPT_CHARS};
pub use sleep::{
    SleepHandler, SleepOptions, COMPRESS_PROMPT, DIGEST_CATEGORY, EPISODE_CATEGORY,
    GENERALIZE_PROMPT, REFLECTION_PROMPT, SLEEP_PHASES,
};
pub use stats::{BusStats, HandlerStats};
pub use subscription::{DetachOnDrop, Subscription};
pub use summarizer::{
    truncate_middle, EpisodeSummarizer, SummarizerOptions, MIDDLE_TRUNCATED, SUMMARY_PROMPT,
};

use crate::clock::Clock;
use crate::error::{Error, ErrorCode, Result};
use crate::race::{race, First};

/// Something that reacts to bus events: a handler registered with
/// [`EventBus::on`], or the persister.
#[async_trait(?Send)]
pub trait EventHandler {
    /// Handles one event; an error is isolated and reported.
    async fn handle(&self, event: &BusEvent) -> Result<()>;
}

/// Called with the handler's name, the event and the error when a handler
/// (or the persister, named `"persister"`) fails or times out.
pub type ErrorListener = Rc<dyn Fn(&str, &BusEvent, &Error)>;

/// Options of an [`EventBus`].
#[derive(Clone)]
pub struct BusOptions {
    /// Events that may wait in the queue; more are dropped. Default 1,000.
    pub max_queue: usize,
    /// How long one handler may run on one event before it counts as timed
    /// out and the bus moves on; `None` waits for ever.
    pub handler_timeout_ms: Option<f64>,
    /// Told about every handler failure and timeout.
    pub on_error: Option<ErrorListener>,
}

impl Default for BusOptions {
    fn default() -> Self {
        BusOptions {
            max_queue: 1000,
            handler_timeout_ms: None,
            on_error: None,
        }
    }
}

/// A registered handler.
struct Registered {
    id: u64,
    event_type: String,
    name: String,
    handler: Rc<dyn EventHandler>,
}

/// Told synchronously, at emit time, of every event of one type (see
/// [`EventBus::watch`]).
pub type Watcher = Rc<dyn Fn(&BusEvent)>;

/// A registered watcher.
struct Watching {
    id: u64,
    event_type: String,
    watcher: Watcher,
}

/// The bus's state, shared by its handle and its loop.
struct State {
    queue: VecDeque<BusEvent>,
    handlers: Vec<Registered>,
    watchers: Vec<Watching>,
    persister: Option<Rc<dyn EventHandler>>,
    next_id: u64,
    running: bool,
    loop_active: bool,
    loop_waker: Option<Waker>,
    stop_wakers: Vec<Waker>,
    stats: BusStats,
}

/// The `EventBus`. Cloning gives another handle to the same bus.
#[derive(Clone)]
pub struct EventBus {
    state: Rc<RefCell<State>>,
    clock: Rc<dyn Clock>,
    options: BusOptions,
}

impl EventBus {
    /// A stopped bus with no handlers. A `max_queue` of 0 is `INVALID_ARGUMENT`.
    pub fn new(clock: Rc<dyn Clock>, options: BusOptions) -> Result<EventBus> {
        if options.max_queue == 0 {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "maxQueue must be at least 1",
            ));
        }
        if options
            .handler_timeout_ms
            .is_some_and(|t| !(t.is_finite() && t > 0.0))
        {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "handlerTimeoutMs must be a positive number of milliseconds",
            ));
        }
        Ok(EventBus {
            state: Rc::new(RefCell::new(State {
                queue: VecDeque::new(),
                handlers: Vec::new(),
                watchers: Vec::new(),
                persister: None,
                next_id: 1,
                running: false,
                loop_active: false,
                loop_waker: None,
                stop_wakers: Vec::new(),
                stats: BusStats::default(),
            })),
            clock,
            options,
        })
    }

    /// The clock the bus stamps events with.
    pub fn clock(&self) -> &Rc<dyn Clock> {
        &self.clock
    }

    /// Registers `handler` for `event_type` under `name` (used in stats and
    /// error reports); several per type. Returns the id [`EventBus::off`] takes.
    pub fn on(&self, event_type: &str, name: &str, handler: Rc<dyn EventHandler>) -> u64 {
        let mut s = self.state.borrow_mut();
        let id = s.next_id;
        s.next_id += 1;
        s.handlers.push(Registered {
            id,
            event_type: event_type.to_string(),
            name: name.to_string(),
            handler,
        });
        s.stats.handler(name);
        id
    }

    /// Registers `watcher`, called synchronously by [`EventBus::emit`] for
    /// every event of `event_type`, queued or dropped, before it waits in the
    /// queue. For what must not wait behind the queue (a wake-up that
    /// interrupts a running sleep); it must be quick and must not emit.
    /// Returns the id [`EventBus::off`] takes.
    pub fn watch(&self, event_type: &str, watcher: Watcher) -> u64 {
        let mut s = self.state.borrow_mut();
        let id = s.next_id;
        s.next_id += 1;
        s.watchers.push(Watching {
            id,
            event_type: event_type.to_string(),
            watcher,
        });
        id
    }

    /// Unregisters a handler or a watcher; `false` if it was not registered
    /// (any more). An event already being dispatched still reaches it.
    pub fn off(&self, id: u64) -> bool {
        let mut s = self.state.borrow_mut();
        let before = s.handlers.len() + s.watchers.len();
        s.handlers.retain(|h| h.id != id);
        s.watchers.retain(|w| w.id != id);
        s.handlers.len() + s.watchers.len() != before
    }

    /// Sets (or with `None` removes) the persister: called for every event before its handlers.
    pub fn set_persister(&self, persister: Option<Rc<dyn EventHandler>>) {
        self.state.borrow_mut().persister = persister;
    }

    /// Queues `event`; `false` when the queue is full and the event was
    /// dropped (counted in [`BusStats::dropped`]). Never blocks.
    pub fn emit(&self, event: BusEvent) -> bool {
        let watchers: Vec<Watcher> = self
            .state
            .borrow()
            .watchers
            .iter()
            .filter(|w| w.event_type == event.event_type)
            .map(|w| w.watcher.clone())
            .collect();
        for watcher in watchers {
            watcher(&event);
        }
        let waker = {
            let mut s = self.state.borrow_mut();
            if s.queue.len() >= self.options.max_queue {
                s.stats.dropped += 1;
                return false;
            }
            s.stats.emitted += 1;
            s.queue.push_back(event);
            s.loop_waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
        true
    }

    /// Events waiting in the queue.
    pub fn pending(&self) -> usize {
        self.state.borrow().queue.len()
    }

    /// Whether the bus is started and not stopped.
    pub fn is_running(&self) -> bool {
        self.state.borrow().running
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> BusStats {
        self.state.borrow().stats.clone()
    }

    /// Marks the bus started; `false` if it already was (the loop then runs
    /// already, and must not be spawned twice).
    pub fn start(&self) -> bool {
        let mut s = self.state.borrow_mut();
        if s.running || s.loop_active {
            return false;
        }
        s.running = true;
        s.loop_active = true;
        true
    }

    /// The background loop, to spawn after [`EventBus::start`] returned
    /// `true`: dispatches queued events one after another until the bus is
    /// stopped and its queue is empty.
    pub async fn run(&self) {
        while let Some(event) = self.next_event().await {
            self.dispatch(event).await;
        }
        let wakers = {
            let mut s = self.state.borrow_mut();
            s.loop_active = false;
            std::mem::take(&mut s.stop_wakers)
        };
        wakers.into_iter().for_each(Waker::wake);
    }

    /// Stops the bus after draining its queue: resolves once every event
    /// queued before the call has been dispatched. Events emitted during the
    /// drain are dispatched too. Without a running loop, drains here.
    pub async fn stop(&self) {
        let (waker, loop_active) = {
            let mut s = self.state.borrow_mut();
            s.running = false;
            (s.loop_waker.take(), s.loop_active)
        };
        if let Some(w) = waker {
            w.wake();
        }
        if loop_active {
            std::future::poll_fn(|cx| {
                let mut s = self.state.borrow_mut();
                if !s.loop_active {
                    return Poll::Ready(());
                }
                s.stop_wakers.push(cx.waker().clone());
                Poll::Pending
            })
            .await;
        } else {
            loop {
                let next = self.state.borrow_mut().queue.pop_front();
                let Some(event) = next else { break };
                self.dispatch(event).await;
            }
        }
    }

    /// The next queued event; `None` once stopped with nothing queued.
    async fn next_event(&self) -> Option<BusEvent> {
        std::future::poll_fn(|cx| {
            let mut s = self.state.borrow_mut();
            if let Some(event) = s.queue.pop_front() {
                return Poll::Ready(Some(event));
            }
            if !s.running {
                return Poll::Ready(None);
            }
            s.loop_waker = Some(cx.waker().clone());
            Poll::Pending
        })
        .await
    }

    /// Dispatches one event: persister first, then its handlers concurrently.
    pub async fn dispatch(&self, event: BusEvent) {
        let (persister, handlers) = {
            let s = self.state.borrow();
            let handlers: Vec<(String, Rc<dyn EventHandler>)> = s
                .handlers
                .iter()
                .filter(|h| h.event_type == event.event_type)
                .map(|h| (h.name.clone(), h.handler.clone()))
                .collect();
            (s.persister.clone(), handlers)
        };
        if let Some(p) = persister {
            if let Err(e) = p.handle(&event).await {
                self.state.borrow_mut().stats.persist_errors += 1;
                self.report("persister", &event, &e);
            }
        }
        let runs: Vec<LocalFuture<'_, ()>> = handlers
            .iter()
            .map(|(name, h)| {
                Box::pin(self.run_handler(name, h.as_ref(), &event)) as LocalFuture<'_, ()>
            })
            .collect();
        join_all(runs).await;
        self.state.borrow_mut().stats.dispatched += 1;
    }

    /// Runs one handler on one event, with the timeout, counting the outcome.
    async fn run_handler(&self, name: &str, handler: &dyn EventHandler, event: &BusEvent) {
        let outcome = match self.options.handler_timeout_ms {
            Some(ms) => match race(handler.handle(event), self.clock.sleep(ms)).await {
                First::Left(r) => r.map_err(Some),
                First::Right(()) => Err(None),
            },
            None => handler.handle(event).await.map_err(Some),
        };
        let error = {
            let mut s = self.state.borrow_mut();
            let stats = s.stats.handler(name);
            stats.calls += 1;
            match &outcome {
                Ok(()) => None,
                Err(Some(e)) => {
                    stats.errors += 1;
                    s.stats.handler_errors += 1;
                    Some(e.clone())
                }
                Err(None) => {
                    stats.timeouts += 1;
                    s.stats.handler_timeouts += 1;
                    Some(Error::new(
                        ErrorCode::HandlerTimeout,
                        format!(
                            "handler {name} did not settle within {} ms on {}",
                            self.options.handler_timeout_ms.unwrap_or_default(),
                            event.event_type
                        ),
                    ))
                }
            }
        };
        if let Some(e) = error {
            self.report(name, event, &e);
        }
    }

    fn report(&self, name: &str, event: &BusEvent, error: &Error) {
        if let Some(listener) = &self.options.on_error {
            listener(name, event, error);
        }
    }
}
