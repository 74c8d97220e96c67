//! Event-bus test helpers: a probe handler, an event maker, and tiny
//! executor pieces (yield, join) so tests need no async runtime.

use std::cell::RefCell;
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;

use async_trait::async_trait;
use context_compiler::bus::{BusEvent, EventHandler};
use context_compiler::{Error, ErrorCode, Result};
use serde_json::{json, Map, Value};

pub type Log = Rc<RefCell<Vec<String>>>;

/// Records `{name}:{type}:{data.n}` for every event; fails or never settles
/// when asked; yields `yields` times first (so it is still running when
/// other work happens).
pub struct Probe {
    name: &'static str,
    log: Log,
    behaviour: Behaviour,
    yields: usize,
}

#[derive(Clone, Copy)]
pub enum Behaviour {
    Ok,
    Fail,
    Hang,
}

#[async_trait(?Send)]
impl EventHandler for Probe {
    async fn handle(&self, event: &BusEvent) -> Result<()> {
        for _ in 0..self.yields {
            yield_now().await;
        }
        self.log.borrow_mut().push(format!(
            "{}:{}:{}",
            self.name,
            event.event_type,
            event.data.get("n").map_or(Value::Null, Clone::clone)
        ));
        match self.behaviour {
            Behaviour::Ok => Ok(()),
            Behaviour::Fail => Err(Error::new(ErrorCode::InvalidArgument, "boom")),
            Behaviour::Hang => std::future::pending().await,
        }
    }
}

pub fn probe(name: &'static str, log: &Log, behaviour: Behaviour, yields: usize) -> Rc<Probe> {
    Rc::new(Probe {
        name,
        log: log.clone(),
        behaviour,
        yields,
    })
}

pub async fn yield_now() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if yielded {
            Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    })
    .await
}

/// Runs two futures concurrently to completion.
pub async fn join<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
    let (mut a, mut b) = (pin!(a), pin!(b));
    let (mut ra, mut rb) = (None, None);
    std::future::poll_fn(|cx| {
        if ra.is_none() {
            if let Poll::Ready(x) = a.as_mut().poll(cx) {
                ra = Some(x);
            }
        }
        if rb.is_none() {
            if let Poll::Ready(y) = b.as_mut().poll(cx) {
                rb = Some(y);
            }
        }
        if ra.is_some() && rb.is_some() {
            Poll::Ready((ra.take().unwrap(), rb.take().unwrap()))
        } else {
            Poll::Pending
        }
    })
    .await
}

pub fn event(kind: &str, n: u64) -> BusEvent {
    let mut data = Map::new();
    data.insert("n".into(), json!(n));
    BusEvent::new(kind, "agent-1", Some("s-1".into()), data, 0.0)
}

/// A clock the test moves by hand; a sleep yields once, then moves it on by
/// what it slept (so background loops make progress without real time).
#[derive(Default)]
pub struct ManualClock {
    now: std::cell::Cell<f64>,
    pub sleeps: std::cell::Cell<usize>,
}

impl ManualClock {
    pub fn at(ms: f64) -> Rc<ManualClock> {
        let c = ManualClock::default();
        c.now.set(ms);
        Rc::new(c)
    }

    pub fn now(&self) -> f64 {
        self.now.get()
    }

    pub fn advance(&self, ms: f64) {
        self.now.set(self.now.get() + ms);
    }
}

#[async_trait(?Send)]
impl context_compiler::clock::Clock for ManualClock {
    fn now_ms(&self) -> f64 {
        self.now.get()
    }

    async fn sleep(&self, ms: f64) {
        yield_now().await;
        self.sleeps.set(self.sleeps.get() + 1);
        self.advance(ms);
    }
}

/// Where a [`Keep`] handler puts the events it is given.
pub type Kept = Rc<RefCell<Vec<BusEvent>>>;

/// A handler (or persister) that keeps every event it is given.
pub struct Keep(Kept);

#[async_trait(?Send)]
impl EventHandler for Keep {
    async fn handle(&self, e: &BusEvent) -> Result<()> {
        self.0.borrow_mut().push(e.clone());
        Ok(())
    }
}

/// A [`Keep`] handler and the events it keeps.
pub fn keeper() -> (Rc<Keep>, Kept) {
    let kept = Kept::default();
    (Rc::new(Keep(kept.clone())), kept)
}
