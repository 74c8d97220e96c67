//! The providers' vocabulary, below everything that renders, records or
//! runs a request: the request formats, the tool names and call ids each
//! accepts, and what a reply carries besides its answer (the reasoning it
//! asks back, what the response says of itself).

mod format;
pub mod names;
mod reply;

pub use format::ProviderFormat;
pub use reply::{Reasoning, ResponseMeta};
