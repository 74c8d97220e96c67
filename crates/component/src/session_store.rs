//! The `session-store` interface: sessions saved where artifacts are kept
//! (the selected backend), and `sync` for several writers of one session.

use std::cell::RefCell;
use std::rc::Rc;

use super::artifact_store::selected_sessions;
use super::bindings::exports::agent::context_compiler::session_store::{
    Error, Guest, SaveReport, SyncOptions as WitSyncOptions, SyncReport,
};
use super::bindings::exports::agent::context_compiler::sessions::{
    Session as SessionHandle, SessionBorrow,
};
use super::exec::block_on;
use super::sessions::SessionResource;
use super::Component;
use context_compiler::clock::{os_seed, IdRng, SystemClock};
use context_compiler::session::{sync_session, SessionEnv, SyncOptions};
use context_compiler::tokens::DefaultTokenCounter;

/// What a loaded session is given for the events recorded after loading.
fn env() -> SessionEnv {
    SessionEnv {
        clock: Rc::new(SystemClock),
        counter: Rc::new(DefaultTokenCounter),
        seed: os_seed(),
    }
}

impl Guest for Component {
    fn save(target: SessionBorrow<'_>) -> Result<SaveReport, Error> {
        let store = selected_sessions()?;
        let session = &target.get::<SessionResource>().inner;
        let report = block_on(store.save_session(session.as_ref())).and_then(|r| r)?;
        Ok(SaveReport {
            events_written: report.events_written,
            rewritten: report.rewritten,
        })
    }

    fn load(session_id: String) -> Result<Option<SessionHandle>, Error> {
        let store = selected_sessions()?;
        let loaded = block_on(store.load_session(&session_id, env())).and_then(|r| r)?;
        Ok(loaded.map(|session| {
            SessionHandle::new(SessionResource {
                inner: Rc::new(RefCell::new(session)),
            })
        }))
    }

    fn sync(target: SessionBorrow<'_>, options: WitSyncOptions) -> Result<SyncReport, Error> {
        let store = selected_sessions()?;
        let session = &target.get::<SessionResource>().inner;
        let defaults = SyncOptions::default();
        let options = SyncOptions {
            max_tries: options.max_tries.unwrap_or(defaults.max_tries),
            base_delay_ms: options
                .base_delay_ms
                .map_or(defaults.base_delay_ms, f64::from),
            max_delay_ms: options
                .max_delay_ms
                .map_or(defaults.max_delay_ms, f64::from),
        };
        let mut rng = IdRng::new(os_seed());
        let report = block_on(sync_session(
            store.as_ref(),
            session.as_ref(),
            &SystemClock,
            &mut rng,
            &options,
        ))
        .and_then(|r| r)?;
        Ok(SyncReport {
            tries: report.tries,
            merged: report.merged,
            events_written: report.events_written,
        })
    }

    fn delete_session(session_id: String) -> Result<bool, Error> {
        let store = selected_sessions()?;
        Ok(block_on(store.delete_session(&session_id)).and_then(|r| r)?)
    }

    fn list_sessions() -> Result<Vec<String>, Error> {
        let store = selected_sessions()?;
        Ok(block_on(store.list_sessions()).and_then(|r| r)?)
    }
}
