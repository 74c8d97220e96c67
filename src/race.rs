//! Racing two futures without an executor dependency.

use std::future::Future;
use std::pin::pin;
use std::task::Poll;

/// Which of two raced futures finished first.
pub(crate) enum First<A, B> {
    /// The first future.
    Left(A),
    /// The second future.
    Right(B),
}

/// Polls both futures until one completes; the other is dropped. The first
/// is polled first, so it wins a tie.
pub(crate) async fn race<A: Future, B: Future>(a: A, b: B) -> First<A::Output, B::Output> {
    let mut a = pin!(a);
    let mut b = pin!(b);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(x) = a.as_mut().poll(cx) {
            return Poll::Ready(First::Left(x));
        }
        if let Poll::Ready(y) = b.as_mut().poll(cx) {
            return Poll::Ready(First::Right(y));
        }
        Poll::Pending
    })
    .await
}
