//! What the main module tells the shared store methods (`crates/js`,
//! `store_methods!`): its stores save its own sessions natively, load them
//! as its `Session`s and open memories as its `PersistentMemory`.

use std::rc::Rc;

use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler::memory::PersistentMemory as CoreMemory;
use context_compiler::session::{SavedEvents, SessionEnv, SessionSource};
use context_compiler_js::convert::describe;
use context_compiler_js::env::{seed, JsClock};
use context_compiler_js::store_methods::StoreModule;
use wasm_bindgen::JsValue;

use crate::memory::PersistentMemory;
use crate::registry::{session, Main};
use crate::session::{counter_option, JsSession};

impl StoreModule for Main {
    fn session_source(value: &JsValue) -> Result<Rc<dyn SessionSource>> {
        match session(value) {
            Some(session) => Ok(session),
            None => Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("session must be a Session (got {})", describe(value)),
            )),
        }
    }

    fn restored(session_id: &str, saved: SavedEvents, options: &JsValue) -> Result<JsValue> {
        let env = SessionEnv {
            clock: Rc::new(JsClock),
            counter: counter_option(&Some(options), "options")?,
            seed: seed(),
        };
        Ok(JsSession::from_core(saved.restore(session_id, env)?).into())
    }

    fn memory(memory: CoreMemory) -> JsValue {
        PersistentMemory::wrap(memory).into()
    }
}
