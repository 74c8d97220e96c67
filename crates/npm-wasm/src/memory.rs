//! The main module's `PersistentMemory`: memory journalled into one of its
//! stores (`crates/js`, `persistent_memory_class!`).

use wasm_bindgen::prelude::*;

context_compiler_js::persistent_memory_class!(crate::registry::Main);
