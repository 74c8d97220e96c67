//! The main module's classes: sessions and event logs, the compilers and
//! their processors, the context window, tools and their normaliser, the turn
//! runner, the in-memory artifact store and memory, token counting and
//! hashing (`js/instance.js` loads the module).

mod artifact_store_arg;
mod artifacts;
mod budget;
pub(crate) mod compiler;
mod context_window;
mod counter;
mod in_memory;
mod normalize;
mod processors;
mod record_buffers;
mod runner;
mod schema_engine;
pub(crate) mod session;
mod session_saving;
mod tools;
mod types;
mod working_context;
