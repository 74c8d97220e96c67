//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod bus;
pub mod first_reply;
pub mod golden;
pub mod memory;
pub mod model;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use context_compiler::clock::Clock;
use context_compiler::normalize::aligner::PerceptionAligner;
use context_compiler::tokens::{DefaultTokenCounter, TokenCounter};
use context_compiler::tools::{
    AbortSignal, ToolBridge, ToolFailure, ToolInterruptHandler, ToolInterruptOptions, ToolOutput,
};
use context_compiler::Session;

/// A clock that advances by `step` milliseconds on every reading.
pub struct StepClock {
    now: Cell<f64>,
    step: f64,
}

impl StepClock {
    pub fn new(start: f64, step: f64) -> Rc<Self> {
        Rc::new(StepClock {
            now: Cell::new(start),
            step,
        })
    }
}

#[async_trait::async_trait(?Send)]
impl Clock for StepClock {
    fn now_ms(&self) -> f64 {
        let t = self.now.get();
        self.now.set(t + self.step);
        t
    }

    /// Advances the clock instead of waiting.
    async fn sleep(&self, ms: f64) {
        self.now.set(self.now.get() + ms);
    }
}

/// A deterministic session with the default counter.
/// Records a user turn saying `question` and an assistant turn saying
/// `answer`.
pub fn exchange(s: &mut Session, question: &str, answer: &str) {
    for (kind, text) in [("user_input", question), ("assistant_output", answer)] {
        s.record(kind, serde_json::json!({ "content": text }), None)
            .expect("recorded");
    }
}

/// Records a call of `tool` with `arguments` and its successful `result`,
/// paired by the call's event id; returns that id.
#[allow(dead_code)]
pub fn tool_exchange(
    s: &mut Session,
    tool: &str,
    arguments: serde_json::Value,
    result: &str,
) -> String {
    let id = s
        .record(
            "tool_call",
            serde_json::json!({"tool_name": tool, "arguments": arguments}),
            None,
        )
        .unwrap()
        .event_id
        .clone();
    s.record(
        "tool_success",
        serde_json::json!({"tool": tool, "call_id": id, "result": result}),
        None,
    )
    .unwrap();
    id
}

pub fn session(id: &str) -> Session {
    session_with(id, Rc::new(DefaultTokenCounter))
}

/// A deterministic session with the given counter.
pub fn session_with(id: &str, counter: Rc<dyn TokenCounter>) -> Session {
    Session::with_env(
        Some(id.to_string()),
        StepClock::new(1_700_000_000_000.0, 1.0),
        counter,
        42,
    )
}

/// Runs a future to completion on the current thread.
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    pollster::block_on(f)
}

/// Polls every future together on one thread (concurrent, not sequential);
/// their outputs in order.
pub async fn join_all<F: std::future::Future>(futures: impl Iterator<Item = F>) -> Vec<F::Output> {
    let mut pending: Vec<_> = futures.map(|f| Some(Box::pin(f))).collect();
    let mut out: Vec<Option<F::Output>> = pending.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut done = true;
        for (slot, result) in pending.iter_mut().zip(out.iter_mut()) {
            if let Some(f) = slot {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => {
                        *result = Some(v);
                        *slot = None;
                    }
                    std::task::Poll::Pending => done = false,
                }
            }
        }
        if done {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    out.into_iter().map(|o| o.unwrap()).collect()
}

/// Gives the other futures of a [`join_all`] a turn `times` times.
pub async fn yield_turns(times: u32) {
    let mut left = times;
    std::future::poll_fn(|cx| {
        if left == 0 {
            return std::task::Poll::Ready(());
        }
        left -= 1;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    })
    .await;
}

/// Counts what a compile reads, to show what its cost follows.
pub struct CountingCounter {
    /// Characters counted so far.
    pub chars: Cell<u64>,
    /// Texts counted so far.
    pub calls: Cell<u64>,
}

impl CountingCounter {
    /// A counter that has read nothing yet.
    pub fn new() -> Rc<Self> {
        Rc::new(CountingCounter {
            chars: Cell::new(0),
            calls: Cell::new(0),
        })
    }
}

impl TokenCounter for CountingCounter {
    fn count(&self, text: &str) -> u64 {
        self.chars.set(self.chars.get() + text.len() as u64);
        self.calls.set(self.calls.get() + 1);
        DefaultTokenCounter.count(text)
    }
    fn message_overhead(&self) -> u64 {
        3
    }
}

/// A tool handler over `bridge` recording into `session`, with the default
/// normaliser and a step clock (1 ms a reading).
pub fn tool_handler(
    bridge: Rc<dyn ToolBridge>,
    session: &Rc<RefCell<Session>>,
    options: ToolInterruptOptions,
) -> ToolInterruptHandler {
    ToolInterruptHandler::new(
        bridge,
        PerceptionAligner::default(),
        session.clone(),
        StepClock::new(1.0, 1.0),
        options,
    )
}

/// A tool bridge answering every call with what its function makes.
pub struct FixedBridge(pub fn() -> ToolOutput);

#[async_trait::async_trait(?Send)]
impl ToolBridge for FixedBridge {
    async fn execute(
        &self,
        _name: &str,
        _arguments: &serde_json::Value,
        _signal: &AbortSignal,
        _deadline_ms: f64,
    ) -> std::result::Result<ToolOutput, ToolFailure> {
        Ok((self.0)())
    }
}

/// A processor that upper-cases every history message (through
/// copy-on-write: a message the session shares is copied) and lies that the
/// context costs nothing (the compiler recounts).
pub struct Upper;

#[async_trait::async_trait(?Send)]
impl context_compiler::Processor for Upper {
    fn name(&self) -> &str {
        "upper"
    }

    async fn process(
        &self,
        _: &Session,
        mut ctx: context_compiler::WorkingContext,
        _: u64,
        _: &mut context_compiler::SessionWrites,
    ) -> context_compiler::error::Result<context_compiler::WorkingContext> {
        for h in &mut ctx.history {
            let h = Rc::make_mut(h);
            h.content = h.content.to_uppercase();
            h.tokens = None;
        }
        ctx.token_count = 0;
        Ok(ctx)
    }
}
