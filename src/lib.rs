//! A context compiler for LLM agents.
//!
//! The core is pure Rust with no host dependency:
//!
//! - [`session`]: the event-sourced [`Session`] with token counts.
//! - [`bus`]: the [`EventBus`] and its background handlers.
//! - [`tokens`] and [`budget`]: token counting and the [`TokenBudget`].
//! - [`working_context`]: the compiled [`WorkingContext`] and its messages.
//! - [`compiler`]: the [`ContextCompiler`] and its processors.
//! - [`zones`] and [`context_window`]: the four zones, compaction levels,
//!   and the corteX-style [`ContextWindow`].
//! - [`artifacts`]: content-addressed, verified [`ArtifactStore`]s.
//! - [`kv`]: artifacts and sessions kept in any key-value store, chunked and verified.
//! - [`memory`]: the [`MemoryStore`] that compiles preload.
//! - [`normalize`]: redaction, JSON Schema validation and summaries of tool outputs.
//! - [`tools`]: tool calls with deadlines, abort and typed events.
//! - [`llm`]: the [`Llm`] the host injects for summaries.
//! - [`runner`]: the turn runner, [`run_compiled`]: compile, model, tools, recorded.
//!
//! Everything the core needs from the outside world is a trait ([`Clock`],
//! [`TokenCounter`], [`ArtifactStore`], [`SessionStore`], [`KeyValue`],
//! [`MemoryStore`], [`Processor`]); the bindings (the npm package's crates
//! and the WebAssembly component, see `ARCHITECTURE.md`) implement them on
//! top of the host. The TypeScript declarations of the data types are
//! generated from these types (`js/types/`, by a unit test).
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod artifacts;
pub mod budget;
pub mod bus;
pub mod clock;
pub mod compiler;
pub mod context_window;
pub mod error;
pub mod fs_store;
pub mod json_text;
pub mod kv;
pub mod llm;
pub mod media;
pub mod mem_store;
pub mod memory;
mod message;
pub mod normalize;
pub mod recall;
pub mod runner;
pub mod session;
pub mod sql_store;
pub mod telemetry;
pub mod tokens;
pub mod tools;
pub mod wire;
pub mod working_context;
pub mod zones;

#[cfg(test)]
mod typescript;

mod join;
mod lock;
mod race;

pub use artifacts::{ArtifactHandle, ArtifactStore, StoreOptions};
pub use budget::{BudgetPlan, TokenBudget, DEFAULT_USAGE_MARGIN};
pub use bus::{BusEvent, BusOptions, BusStats, EventBus, EventHandler};
pub use clock::Clock;
pub use compiler::{
    ArtifactAttacher, Compactor, CompileOptions, ContextCompiler, HistoryRecall, HistorySelector,
    MemoryPreloader, Processor, SessionWrites,
};
pub use context_window::{CompiledContext, ContextItem, ContextStats, ContextWindow};
pub use error::{Error, ErrorCode, Result};
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub use fs_store::StdFileSystem;
pub use fs_store::{FileSystem, FsArtifactStore, FsKv, DEFAULT_FS_CHUNK_BYTES};
pub use kv::{KeyValue, KvArtifactStore, KvStoreOptions, KvValue, MemoryKv};
pub use llm::{Llm, LlmOptions};
pub use mem_store::{MemoryArtifactStore, StoredArtifact};
pub use memory::{InMemoryBackend, MemoryEntry, MemoryFilter, MemoryStore, PersistentMemory};
pub use runner::{
    run_compiled, Agent, Guard, GuardDecision, Model, ModelAnswer, ModelReply, ModelRequest,
    ReplyStream, RunOptions, RunResult, RunStep, StopReason, StreamDelta, StreamFormat,
    StreamReader, ToolSpec,
};
pub use session::{
    record_shared, EventLog, EvidencePack, ModelUsage, RecordOptions, SaveReport, Session,
    SessionEvent, SessionStore,
};
pub use tokens::{estimate_tokens, DefaultTokenCounter, TokenCounter, WordsTokenCounter};
pub use working_context::{
    ArtifactRef, DroppedItem, HistoryMessage, Layout, MemoryHit, Message, ProviderFormat,
    ToolCallPart, ToolResult, WorkingContext,
};
pub use zones::{
    CompactionLevel, Zone, ZoneBudgets, ZoneUsage, COMPACT_EMERGENCY, COMPACT_FULL, COMPACT_LIGHT,
    DEFAULT_ZONE_BUDGETS,
};

/// The README's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The Rust guide's examples (`docs/rust.md`), compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/rust.md")]
pub struct RustGuideDoctests;
