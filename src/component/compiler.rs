//! The `compiler` interface: compile a session with the built-in processors.

use std::rc::Rc;

use super::bindings::exports::agent::context_compiler::compiler::{
    Compiled, Error, Guest, Memory, Processor as WitProcessor,
};
use super::bindings::exports::agent::context_compiler::sessions::SessionBorrow;
use super::exec::block_on;
use super::host::HostKv;
use super::sessions::SessionResource;
use super::{to_json, wit_error, Component};
use crate::clock::SystemClock;
use crate::compiler::{
    ArtifactAttacher, Compactor, ContextCompiler, HistorySelector, MemoryPreloader, Processor,
};
use crate::error::{self as core, ErrorCode};
use crate::kv::{KvArtifactStore, KvStoreOptions};
use crate::memory::InMemoryBackend;

/// The artifact store over the host's key-value store.
pub(crate) fn host_store() -> Result<Rc<KvArtifactStore<HostKv>>, Error> {
    KvArtifactStore::new(HostKv, Rc::new(SystemClock), KvStoreOptions::default())
        .map(Rc::new)
        .map_err(wit_error)
}

impl Guest for Component {
    fn compile(
        target: SessionBorrow<'_>,
        budget: u64,
        system_prompt: String,
        processors: Vec<WitProcessor>,
        memories: Vec<Memory>,
    ) -> Result<Compiled, Error> {
        let memory = Rc::new(InMemoryBackend::new());
        for m in &memories {
            memory.store(&m.key, &m.content, &m.category);
        }
        let mut pipeline: Vec<Rc<dyn Processor>> = Vec::with_capacity(processors.len());
        for p in processors {
            pipeline.push(match p {
                WitProcessor::HistorySelector(o) => Rc::new(HistorySelector::new(
                    o.keep_first as usize,
                    o.keep_last as usize,
                )),
                WitProcessor::Compactor => Rc::new(Compactor::new()),
                WitProcessor::MemoryPreloader(top_k) => {
                    Rc::new(MemoryPreloader::new(memory.clone(), top_k as usize))
                }
                WitProcessor::ArtifactAttacher(threshold) => Rc::new(ArtifactAttacher::new(
                    host_store()?,
                    usize::try_from(threshold).unwrap_or(usize::MAX),
                )),
            });
        }
        let compiler = ContextCompiler::new(pipeline);
        let resource = target.get::<SessionResource>();
        let mut session = resource.inner.try_borrow_mut().map_err(|_| {
            wit_error(core::Error::new(
                ErrorCode::SessionBusy,
                "the session is in use by a running call",
            ))
        })?;
        let ctx = block_on(compiler.compile(&mut session, budget, &system_prompt))
            .and_then(|r| r)
            .map_err(wit_error)?;
        Ok(Compiled {
            context_json: to_json(&ctx)?,
            messages_json: to_json(&ctx.to_messages())?,
            token_count: ctx.token_count,
        })
    }
}
