//! Awaiting IndexedDB's events: the next of a set of events on a request,
//! a transaction or an open request, as a future. Listeners are removed when
//! the future is dropped, so nothing fires into freed closures.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{DomException, Event, EventTarget, IdbRequest, IdbTransaction};

use context_compiler::error::{Error, ErrorCode, Result};

#[derive(Default)]
struct Slot {
    event: Option<Event>,
    waker: Option<Waker>,
}

/// The first of `names` to fire on a target.
pub(super) struct NextEvent {
    target: EventTarget,
    names: &'static [&'static str],
    slot: Rc<RefCell<Slot>>,
    listener: Closure<dyn FnMut(Event)>,
}

impl NextEvent {
    /// Starts listening for `names` on `target`.
    pub(super) fn new(target: &EventTarget, names: &'static [&'static str]) -> NextEvent {
        let slot = Rc::new(RefCell::new(Slot::default()));
        let in_listener = slot.clone();
        let listener = Closure::<dyn FnMut(Event)>::new(move |event: Event| {
            let mut slot = in_listener.borrow_mut();
            if slot.event.is_none() {
                slot.event = Some(event);
                if let Some(w) = slot.waker.take() {
                    w.wake();
                }
            }
        });
        for name in names {
            let _ =
                target.add_event_listener_with_callback(name, listener.as_ref().unchecked_ref());
        }
        NextEvent {
            target: target.clone(),
            names,
            slot,
            listener,
        }
    }
}

impl Future for NextEvent {
    type Output = Event;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Event> {
        let mut slot = self.slot.borrow_mut();
        match slot.event.take() {
            Some(event) => Poll::Ready(event),
            None => {
                slot.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

impl Drop for NextEvent {
    fn drop(&mut self) {
        for name in self.names {
            let _ = self
                .target
                .remove_event_listener_with_callback(name, self.listener.as_ref().unchecked_ref());
        }
    }
}

/// A stable error for a DOM exception (or anything else thrown) from
/// IndexedDB: quota, closed connection, or a generic store failure.
pub(super) fn dom_error(what: &str, thrown: &JsValue) -> Error {
    let (name, message) = match thrown.dyn_ref::<DomException>() {
        Some(e) => (e.name(), e.message()),
        None => (
            String::new(),
            context_compiler_js::error::thrown_message(thrown),
        ),
    };
    let code = match name.as_str() {
        "QuotaExceededError" => ErrorCode::StoreQuotaExceeded,
        "InvalidStateError" => ErrorCode::StoreClosed,
        _ => ErrorCode::StoreFailed,
    };
    let name = if name.is_empty() {
        "Error".into()
    } else {
        name
    };
    Error::new(code, format!("{what}: {name}: {message}"))
}

/// The result of `request`, once it succeeds.
pub(super) async fn request(request: IdbRequest, what: &str) -> Result<JsValue> {
    let event = NextEvent::new(&request, &["success", "error"]).await;
    if event.type_() == "success" {
        request.result().map_err(|e| dom_error(what, &e))
    } else {
        Err(request_error(&request, what))
    }
}

/// The error of a failed request (an open request included).
pub(super) fn request_error(request: &IdbRequest, what: &str) -> Error {
    let error = request
        .error()
        .ok()
        .flatten()
        .map(JsValue::from)
        .unwrap_or(JsValue::NULL);
    dom_error(what, &error)
}

/// Waits for `tx` to commit; an abort (quota, a failed request, a closed
/// connection) is the transaction's error, and nothing of it was kept.
pub(super) async fn committed(tx: &IdbTransaction, what: &str) -> Result<()> {
    let event = NextEvent::new(tx, &["complete", "abort"]).await;
    if event.type_() == "complete" {
        Ok(())
    } else {
        let error = tx.error().map(JsValue::from).unwrap_or(JsValue::NULL);
        if error.is_null() {
            return Err(Error::new(
                ErrorCode::StoreFailed,
                format!("{what}: the transaction was aborted"),
            ));
        }
        Err(dom_error(what, &error))
    }
}
