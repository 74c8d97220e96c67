//! An async lock for single-threaded hosts: one holder at a time, waiters
//! served in arrival order, no executor needed.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::task::{Poll, Waker};

/// One caller waiting for the lock.
struct Waiter {
    granted: Cell<bool>,
    waker: RefCell<Option<Waker>>,
}

#[derive(Default)]
struct State {
    held: bool,
    waiters: VecDeque<Rc<Waiter>>,
}

/// Hands the lock to the next waiter, or frees it.
fn release(state: &RefCell<State>) {
    let next = {
        let mut s = state.borrow_mut();
        match s.waiters.pop_front() {
            Some(w) => Some(w),
            None => {
                s.held = false;
                None
            }
        }
    };
    if let Some(w) = next {
        w.granted.set(true);
        if let Some(waker) = w.waker.borrow_mut().take() {
            waker.wake();
        }
    }
}

/// A fair async lock. Cloning gives another handle to the same lock.
#[derive(Clone, Default)]
pub struct AsyncLock {
    state: Rc<RefCell<State>>,
}

/// Holds an [`AsyncLock`] until dropped.
pub struct LockGuard {
    state: Rc<RefCell<State>>,
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        release(&self.state);
    }
}

/// A caller's place in line: leaving it (the future dropped) removes the
/// caller, or passes the lock on when it had already been handed over.
struct Place {
    state: Rc<RefCell<State>>,
    waiter: Rc<Waiter>,
    taken: bool,
}

impl Drop for Place {
    fn drop(&mut self) {
        if self.taken {
            return;
        }
        if self.waiter.granted.get() {
            release(&self.state);
        } else {
            let me = &self.waiter;
            self.state
                .borrow_mut()
                .waiters
                .retain(|w| !Rc::ptr_eq(w, me));
        }
    }
}

impl AsyncLock {
    /// A free lock.
    pub fn new() -> AsyncLock {
        AsyncLock::default()
    }

    /// Waits for the lock, behind every earlier caller.
    pub async fn lock(&self) -> LockGuard {
        let waiter = {
            let mut s = self.state.borrow_mut();
            let waiter = Rc::new(Waiter {
                granted: Cell::new(!s.held),
                waker: RefCell::new(None),
            });
            if s.held {
                s.waiters.push_back(waiter.clone());
            }
            s.held = true;
            waiter
        };
        let mut place = Place {
            state: self.state.clone(),
            waiter,
            taken: false,
        };
        std::future::poll_fn(|cx| {
            if place.waiter.granted.get() {
                Poll::Ready(())
            } else {
                *place.waiter.waker.borrow_mut() = Some(cx.waker().clone());
                Poll::Pending
            }
        })
        .await;
        place.taken = true;
        LockGuard {
            state: self.state.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Waker};

    fn poll<F: Future>(f: std::pin::Pin<&mut F>) -> Poll<F::Output> {
        f.poll(&mut Context::from_waker(Waker::noop()))
    }

    #[test]
    fn waiters_are_served_in_order_and_a_dropped_waiter_passes_on() {
        let lock = AsyncLock::new();
        let mut first = pin!(lock.lock());
        let Poll::Ready(guard) = poll(first.as_mut()) else {
            panic!("a free lock is taken at once")
        };
        let mut second = Box::pin(lock.lock());
        let mut third = pin!(lock.lock());
        assert!(poll(second.as_mut()).is_pending());
        assert!(poll(third.as_mut()).is_pending());
        drop(guard);
        // The lock went to `second`; dropping it unpolled passes it to `third`.
        drop(second);
        let Poll::Ready(g3) = poll(third.as_mut()) else {
            panic!("the third caller gets the lock the second gave up")
        };
        drop(g3);
        let mut fourth = pin!(lock.lock());
        assert!(poll(fourth.as_mut()).is_ready(), "the lock is free again");
    }
}
