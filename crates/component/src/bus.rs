//! The `bus` interface: the core's event bus, dispatching to the host's
//! handlers through the `bus-host` import.

use std::cell::RefCell;
use std::rc::Rc;

use async_trait::async_trait;

use super::bindings::agent::context_compiler::bus_host;
use super::bindings::exports::agent::context_compiler::bus::{
    AttachOptions, BusOptions as WitOptions, Error, EventBus as BusHandle, Guest, GuestEventBus,
    HandlerFailure,
};
use super::bindings::exports::agent::context_compiler::sessions::SessionBorrow;
use super::exec::block_on;
use super::sessions::SessionResource;
use super::{parse_json, to_json, Component};
use context_compiler::bus::{
    session_feed, BusEvent, BusOptions, EventBus, EventHandler, FeedOptions,
};
use context_compiler::clock::SystemClock;
use context_compiler::error::{self, ErrorCode, Result};

/// A handler the host registered by name.
struct HostHandler(String);

#[async_trait(?Send)]
impl EventHandler for HostHandler {
    async fn handle(&self, event: &BusEvent) -> Result<()> {
        let json = context_compiler::json_text::to_json_text(event)
            .map_err(|e| error::Error::new(ErrorCode::NotSerializable, e.to_string()))?;
        bus_host::handle(&self.0, &json).map_err(|m| {
            error::Error::new(
                ErrorCode::HandlerFailed,
                format!("handler '{}' failed: {m}", self.0),
            )
        })
    }
}

/// An event bus resource and the failures reported since the last drain.
pub(crate) struct BusResource {
    bus: EventBus,
    failures: Rc<RefCell<Vec<HandlerFailure>>>,
}

impl Guest for Component {
    type EventBus = BusResource;
}

impl GuestEventBus for BusResource {
    fn create(options: WitOptions) -> std::result::Result<BusHandle, Error> {
        let failures: Rc<RefCell<Vec<HandlerFailure>>> = Rc::default();
        let reported = failures.clone();
        let bus = EventBus::new(
            Rc::new(SystemClock),
            BusOptions {
                max_queue: options.max_queue.map_or(1000, |n| n as usize),
                handler_timeout_ms: None,
                on_error: Some(Rc::new(
                    move |handler: &str, event: &BusEvent, e: &error::Error| {
                        reported.borrow_mut().push(HandlerFailure {
                            handler: handler.to_string(),
                            event_type: event.event_type.clone(),
                            message: e.message().to_string(),
                        })
                    },
                )),
            },
        )?;
        Ok(BusHandle::new(BusResource { bus, failures }))
    }

    fn on(&self, event_type: String, handler: String) -> u64 {
        self.bus
            .on(&event_type, &handler, Rc::new(HostHandler(handler.clone())))
    }

    fn off(&self, id: u64) -> bool {
        self.bus.off(id)
    }

    fn set_persister(&self, handler: Option<String>) {
        self.bus
            .set_persister(handler.map(|name| Rc::new(HostHandler(name)) as Rc<dyn EventHandler>));
    }

    fn emit(&self, event_json: String) -> std::result::Result<bool, Error> {
        let init = parse_json(&event_json, "event-json")?;
        let event = BusEvent::from_init(&init, self.bus.clock().now_ms())?;
        Ok(self.bus.emit(event))
    }

    fn pending(&self) -> u32 {
        u32::try_from(self.bus.pending()).unwrap_or(u32::MAX)
    }

    fn drain(&self) -> std::result::Result<Vec<HandlerFailure>, Error> {
        // Never started, the bus drains inside `stop`.
        block_on(self.bus.stop())?;
        Ok(std::mem::take(&mut *self.failures.borrow_mut()))
    }

    fn stats_json(&self) -> String {
        to_json(&self.bus.stats()).unwrap_or_else(|e| format!("{{\"error\":{:?}}}", e.message))
    }

    fn attach(
        &self,
        target: SessionBorrow<'_>,
        options: AttachOptions,
    ) -> std::result::Result<(), Error> {
        let feed = session_feed(
            &self.bus,
            FeedOptions {
                agent_id: options.agent_id,
                user_id: options.user_id,
                user_display_name: options.user_display_name,
                episode_id: options.episode_id,
            },
        );
        target
            .get::<SessionResource>()
            .inner
            .try_borrow_mut()
            .map_err(|_| {
                error::Error::new(
                    ErrorCode::SessionBusy,
                    "the session is in use by a running call",
                )
            })?
            .set_observer(Some(feed));
        Ok(())
    }
}
