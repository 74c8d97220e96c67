//! Awaiting several futures at once, without an executor dependency.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

/// A boxed, single-threaded future.
pub(crate) type LocalFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// Gives the other futures polled with this one (by [`join_all`]) their
/// turn: pending once, waking itself.
pub(crate) async fn yield_now() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if yielded {
            return Poll::Ready(());
        }
        yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    })
    .await;
}

/// Polls every future until all have completed; their outputs in order.
pub(crate) async fn join_all<T>(futures: Vec<LocalFuture<'_, T>>) -> Vec<T> {
    let mut slots: Vec<(Option<LocalFuture<'_, T>>, Option<T>)> =
        futures.into_iter().map(|f| (Some(f), None)).collect();
    std::future::poll_fn(|cx| {
        let mut done = true;
        for (future, output) in slots.iter_mut() {
            if let Some(f) = future {
                match f.as_mut().poll(cx) {
                    Poll::Ready(value) => {
                        *output = Some(value);
                        *future = None;
                    }
                    Poll::Pending => done = false,
                }
            }
        }
        if done {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    slots.into_iter().filter_map(|(_, output)| output).collect()
}
