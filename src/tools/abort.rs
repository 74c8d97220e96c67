//! A cancellation signal the core raises and bindings forward to the host.

use std::cell::RefCell;
use std::rc::Rc;
use std::task::{Poll, Waker};

type Listener = Box<dyn FnOnce(&str)>;

#[derive(Default)]
struct State {
    reason: Option<String>,
    listeners: Vec<Listener>,
}

/// Raised by the handler when a call times out, so well-behaved tools stop,
/// and by a caller to cancel a run ([`crate::runner::run_compiled`]).
/// Bindings subscribe with [`AbortSignal::on_abort`] (the JS binding aborts
/// the `AbortController` whose signal it passed to the tool).
#[derive(Clone, Default)]
pub struct AbortSignal {
    state: Rc<RefCell<State>>,
}

impl AbortSignal {
    /// A signal that has not been raised.
    pub fn new() -> Self {
        AbortSignal::default()
    }

    /// Whether the signal was raised.
    pub fn is_aborted(&self) -> bool {
        self.state.borrow().reason.is_some()
    }

    /// Why the signal was raised.
    pub fn reason(&self) -> Option<String> {
        self.state.borrow().reason.clone()
    }

    /// Runs `listener` when the signal is raised (at once if it already was).
    pub fn on_abort(&self, listener: impl FnOnce(&str) + 'static) {
        let reason = self.state.borrow().reason.clone();
        match reason {
            Some(r) => listener(&r),
            None => self.state.borrow_mut().listeners.push(Box::new(listener)),
        }
    }

    /// Resolves with the reason once the signal is raised (at once if it
    /// already was); never resolves otherwise. Race it against work to
    /// stop waiting for that work.
    pub async fn aborted(&self) -> String {
        if let Some(reason) = self.reason() {
            return reason;
        }
        let waker: Rc<RefCell<Option<Waker>>> = Rc::default();
        let woken = waker.clone();
        self.on_abort(move |_| {
            if let Some(w) = woken.borrow_mut().take() {
                w.wake();
            }
        });
        std::future::poll_fn(|cx| match self.reason() {
            Some(reason) => Poll::Ready(reason),
            None => {
                *waker.borrow_mut() = Some(cx.waker().clone());
                Poll::Pending
            }
        })
        .await
    }

    /// Raises the signal (once; later calls do nothing).
    pub fn abort(&self, reason: &str) {
        let listeners = {
            let mut s = self.state.borrow_mut();
            if s.reason.is_some() {
                return;
            }
            s.reason = Some(reason.to_string());
            std::mem::take(&mut s.listeners)
        };
        for l in listeners {
            l(reason);
        }
    }
}

impl std::fmt::Debug for AbortSignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AbortSignal")
            .field("reason", &self.reason())
            .finish()
    }
}
