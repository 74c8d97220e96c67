//! What registering a handler on a bus leaves behind: the ids to remove it
//! by, and a guard that removes it when dropped.

use super::EventBus;

/// Registrations on one bus (handlers and watchers), removed together.
#[derive(Clone)]
pub struct Subscription {
    bus: EventBus,
    ids: Vec<u64>,
}

impl Subscription {
    /// The registrations `ids` on `bus`.
    pub fn new(bus: &EventBus, ids: Vec<u64>) -> Subscription {
        Subscription {
            bus: bus.clone(),
            ids,
        }
    }

    /// The bus they are on.
    pub fn bus(&self) -> &EventBus {
        &self.bus
    }

    /// Removes every registration; `false` if none was still registered.
    pub fn detach(&self) -> bool {
        // Every id is removed, so no short-circuiting `any`.
        let removed: Vec<bool> = self.ids.iter().map(|id| self.bus.off(*id)).collect();
        removed.contains(&true)
    }

    /// A guard that detaches them when dropped.
    pub fn detach_on_drop(self) -> DetachOnDrop {
        DetachOnDrop(self)
    }
}

/// Detaches its [`Subscription`] when dropped: what the handlers' Rust
/// constructors return.
pub struct DetachOnDrop(Subscription);

impl DetachOnDrop {
    /// The subscription it guards.
    pub fn subscription(&self) -> &Subscription {
        &self.0
    }
}

impl Drop for DetachOnDrop {
    fn drop(&mut self) {
        self.0.detach();
    }
}

/// Gives a handler type `$ty(DetachOnDrop)` its `subscription()` and a
/// `new(bus, ...)` that calls its `register(bus, ...)` with the same
/// parameters and keeps the registrations until the value is dropped.
macro_rules! registered_until_dropped {
    ($ty:ident, $doc:literal, ($($arg:ident: $t:ty),* $(,)?)) => {
        impl $ty {
            /// Its registrations (detached when it is dropped).
            pub fn subscription(&self) -> &$crate::bus::Subscription {
                self.0.subscription()
            }

            #[doc = $doc]
            pub fn new(bus: &$crate::bus::EventBus, $($arg: $t),*) -> $ty {
                $ty($ty::register(bus, $($arg),*).detach_on_drop())
            }
        }
    };
}
pub(crate) use registered_until_dropped;
