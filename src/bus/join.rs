//! Awaiting several futures at once, without an executor dependency.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

/// Polls every future until all have completed.
pub(super) async fn join_all(futures: Vec<Pin<Box<dyn Future<Output = ()> + '_>>>) {
    let mut futures: Vec<Option<Pin<Box<dyn Future<Output = ()> + '_>>>> =
        futures.into_iter().map(Some).collect();
    std::future::poll_fn(|cx| {
        let mut done = true;
        for slot in futures.iter_mut() {
            if let Some(f) = slot {
                if f.as_mut().poll(cx).is_ready() {
                    *slot = None;
                } else {
                    done = false;
                }
            }
        }
        if done {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await
}
