//! What the module does when it cannot go on: a panic or a failed allocation.
//!
//! Release builds abort on panic, and in wasm an abort is a trap that leaves
//! the whole call without running destructors: borrows stay taken and the
//! instance can no longer be trusted. The JS entry (`js/instance.js`) installs
//! a host object here at load time. The panic hook and the allocator tell it
//! the cause *before* the trap, so it can turn the trap into a coded error,
//! reject every pending promise and refuse further calls
//! (`MODULE_POISONED`). The host also schedules the async tasks
//! ([`crate::executor`]), so a trap inside one is caught too.

use std::cell::RefCell;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen]
extern "C" {
    /// The host object `js/instance.js` installs.
    #[wasm_bindgen(typescript_type = "unknown")]
    pub type Host;

    /// Asks the host to call `__runTasks` soon (from a microtask, guarded).
    #[wasm_bindgen(method)]
    pub fn schedule(this: &Host);

    /// Notes why the instance is about to trap: `code` is `INTERNAL_PANIC` or
    /// `OUT_OF_MEMORY`, `bytes` the failed allocation's size. Takes only
    /// borrowed strings and a number, so calling it allocates nothing.
    #[wasm_bindgen(method)]
    fn fatal(this: &Host, code: &str, message: &str, bytes: f64);

    /// Keeps `reject` of task `id`'s promise, to reject it if the instance
    /// is poisoned before the task settles.
    #[wasm_bindgen(method)]
    pub fn open(this: &Host, id: f64, reject: &js_sys::Function);

    /// Forgets task `id` (it settled).
    #[wasm_bindgen(method)]
    pub fn close(this: &Host, id: f64);
}

thread_local! {
    static HOST: RefCell<Option<Host>> = const { RefCell::new(None) };
}

/// Installs the host (see the module doc) and the panic hook. Called once by
/// `js/instance.js` right after the module is instantiated.
#[wasm_bindgen(js_name = "__installHost", skip_typescript)]
pub fn install_host(host: JsValue) {
    HOST.with(|h| *h.borrow_mut() = Some(host.unchecked_into()));
    std::panic::set_hook(Box::new(|info| {
        report("INTERNAL_PANIC", &info.to_string(), 0.0);
    }));
}

/// Runs `f` with the installed host, if there is one and it is not borrowed.
pub fn with_host<T>(f: impl FnOnce(&Host) -> T) -> Option<T> {
    HOST.with(|h| match h.try_borrow() {
        Ok(host) => host.as_ref().map(f),
        Err(_) => None,
    })
}

/// Runs `f` with the installed host seen as `H`: a module's own extern type
/// for the methods its host object has beyond [`Host`]'s (the stores
/// module's `files`, the main module's `schemaEngine`, ...).
pub fn with_host_as<H: JsCast, T>(f: impl FnOnce(&H) -> T) -> Option<T> {
    with_host(|host| f(host.unchecked_ref::<H>()))
}

/// Tells the host that an allocation of `bytes` failed. Rust aborts (traps)
/// next unless the caller asked for a fallible allocation, so the host only
/// notes the cause and acts if a trap follows.
pub fn report_out_of_memory(bytes: usize) {
    report("OUT_OF_MEMORY", "", bytes as f64);
}

fn report(code: &str, message: &str, bytes: f64) {
    with_host(|host| host.fatal(code, message, bytes));
}
