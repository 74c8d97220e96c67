//! An interruptible sleep: background loops wait on their clock and wake at
//! once when stopped, so a stopped loop holds no timer.

use std::cell::RefCell;
use std::rc::Rc;
use std::task::{Poll, Waker};

use crate::clock::Clock;
use crate::race::{race, First};

/// A flag a loop sleeps against; [`Interrupt::trigger`] ends every sleep.
#[derive(Clone, Default)]
pub struct Interrupt {
    state: Rc<RefCell<(bool, Vec<Waker>)>>,
}

impl Interrupt {
    /// A fresh, untriggered interrupt.
    pub fn new() -> Interrupt {
        Interrupt::default()
    }

    /// Whether it was triggered.
    pub fn is_triggered(&self) -> bool {
        self.state.borrow().0
    }

    /// Ends every current and later sleep.
    pub fn trigger(&self) {
        let wakers = {
            let mut s = self.state.borrow_mut();
            s.0 = true;
            std::mem::take(&mut s.1)
        };
        wakers.into_iter().for_each(Waker::wake);
    }

    /// Sleeps `ms` on `clock`; `false` if interrupted first (the clock's
    /// timer is dropped then).
    pub async fn sleep(&self, clock: &dyn Clock, ms: f64) -> bool {
        let interrupted = std::future::poll_fn(|cx| {
            let mut s = self.state.borrow_mut();
            if s.0 {
                return Poll::Ready(());
            }
            s.1.push(cx.waker().clone());
            Poll::Pending
        });
        matches!(race(interrupted, clock.sleep(ms)).await, First::Right(())) && !self.is_triggered()
    }
}
