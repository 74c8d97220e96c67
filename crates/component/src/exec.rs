//! Driving the core's futures inside the component. Every import is
//! synchronous, so a future either completes when polled or waits for
//! something that can never happen in a single-threaded component; the
//! latter is an error, not a hang.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use context_compiler::error::{Error, ErrorCode};

struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Runs `future` to completion, or fails when it is stuck.
pub(crate) fn block_on<F: Future>(future: F) -> Result<F::Output, Error> {
    let flag = Arc::new(Flag(AtomicBool::new(true)));
    let waker = Waker::from(flag.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    while flag.0.swap(false, Ordering::SeqCst) {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return Ok(out);
        }
    }
    Err(Error::new(
        ErrorCode::StoreFailed,
        "an operation waited for an event that cannot come in a synchronous host",
    ))
}
