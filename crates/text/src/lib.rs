//! The context compiler's hot loops over text, in a crate of their own (a
//! crate can be given its own release opt-level; see issue 12's notes on
//! building the rest of the module for size):
//!
//! - [`heuristic_milli`]: the default token counter's heuristic, 64 bytes
//!   at a time (`agent-context-compiler`'s `DefaultTokenCounter`), and
//!   [`heuristic_milli_shaped`]: the count with the text's [`TextShape`]
//!   (what the core's `ContentKind` is decided by) from the same pass;
//! - [`redact`]: secret redaction of text and JSON;
//! - [`order`]: the one stable sort every ordering of the library shares;
//! - [`json`]: the module's JSON writer (text from a `serde_json::Value`).
//!
//! Nothing here depends on the host: it is plain Rust, used by the core
//! crate (`agent-context-compiler`), which re-exports it.
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod heuristic;
pub mod json;
pub mod order;
pub mod redact;

pub use heuristic::{
    ascii_len, heuristic_milli, heuristic_milli_shaped, heuristic_milli_utf8, text_shape, TextShape,
};
