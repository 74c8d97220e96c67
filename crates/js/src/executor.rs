//! Runs the futures behind the promises the JS API returns.
//!
//! Like `wasm_bindgen_futures::future_to_promise`, but tasks are polled from
//! `__runTasks`, which the JS host calls from a microtask inside a
//! `try`/`catch`: if a task traps (a panic or a failed allocation), the host
//! sees it and poisons the instance, instead of the trap escaping as an
//! uncaught exception that ends the process; the host also rejects the
//! promises of the tasks still pending then. Without a host (the glue used
//! directly), tasks are polled from `wasm_bindgen_futures`' own queue.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;

use crate::fatal::{with_host, Host};

/// A spawned future and the promise it settles.
struct Task {
    future: Pin<Box<dyn Future<Output = Result<JsValue, JsValue>>>>,
    waker: Waker,
    resolve: Function,
    reject: Function,
}

/// The live tasks, and the ids woken since the last run.
#[derive(Default)]
struct Tasks {
    next_id: u64,
    live: HashMap<u64, Task>,
    ready: VecDeque<u64>,
    scheduled: bool,
}

thread_local! {
    static TASKS: RefCell<Tasks> = RefCell::new(Tasks::default());
}

/// Wakes one task by id; holds nothing that is not `Send`.
struct TaskWaker(u64);

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        wake(self.0);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        wake(self.0);
    }
}

/// Queues task `id` and, if no run is scheduled, schedules one.
fn wake(id: u64) {
    let schedule = TASKS.with(|t| {
        let mut tasks = t.borrow_mut();
        tasks.ready.push_back(id);
        !std::mem::replace(&mut tasks.scheduled, true)
    });
    if schedule && with_host(Host::schedule).is_none() {
        wasm_bindgen_futures::spawn_local(async { run_tasks() });
    }
}

/// Runs `future` as a task and returns a promise of its outcome.
pub fn spawn(future: impl Future<Output = Result<JsValue, JsValue>> + 'static) -> Promise {
    spawn_boxed(Box::pin(future))
}

/// [`spawn`] past boxing: one copy of the task bookkeeping, not one per
/// future type.
fn spawn_boxed(future: Pin<Box<dyn Future<Output = Result<JsValue, JsValue>>>>) -> Promise {
    let mut settle = None;
    let promise = Promise::new(&mut |resolve, reject| settle = Some((resolve, reject)));
    let Some((resolve, reject)) = settle else {
        // `Promise::new` calls its executor synchronously; this is unreachable.
        return promise;
    };
    let reject_on_poison = reject.clone();
    let id = TASKS.with(|t| {
        let mut tasks = t.borrow_mut();
        tasks.next_id += 1;
        let id = tasks.next_id;
        let task = Task {
            future,
            waker: Waker::from(Arc::new(TaskWaker(id))),
            resolve,
            reject,
        };
        tasks.live.insert(id, task);
        id
    });
    with_host(|host| host.open(id as f64, &reject_on_poison));
    wake(id);
    promise
}

/// Polls every woken task until none is left. Called by the JS host.
#[wasm_bindgen(js_name = "__runTasks", skip_typescript)]
pub fn run_tasks() {
    loop {
        let next = TASKS.with(|t| {
            let mut tasks = t.borrow_mut();
            match tasks.ready.pop_front() {
                Some(id) => Some((id, tasks.live.remove(&id))),
                None => {
                    tasks.scheduled = false;
                    None
                }
            }
        });
        let Some((id, task)) = next else { return };
        // A task woken twice, or after it finished, is not live.
        let Some(mut task) = task else { continue };
        let waker = task.waker.clone();
        let outcome = match task.future.as_mut().poll(&mut Context::from_waker(&waker)) {
            Poll::Pending => {
                TASKS.with(|t| t.borrow_mut().live.insert(id, task));
                continue;
            }
            Poll::Ready(outcome) => outcome,
        };
        with_host(|host| host.close(id as f64));
        let _ = match outcome {
            Ok(value) => task.resolve.call1(&JsValue::UNDEFINED, &value),
            Err(error) => task.reject.call1(&JsValue::UNDEFINED, &error),
        };
    }
}
