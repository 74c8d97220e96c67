//! The npm package's exact token counters: one of OpenAI's encodings
//! (`tiktoken-rs`, the Rust port of OpenAI's `tiktoken`) in a module of
//! its own, loaded only by `loadTokenizer` (js/tokenizers.js), so the main
//! module carries no vocabulary. Built once per encoding, with the feature
//! of that name.

use tiktoken_rs::CoreBPE;
use wasm_bindgen::prelude::*;

#[cfg(all(feature = "o200k_base", feature = "cl100k_base"))]
compile_error!("build one encoding at a time: --features o200k_base or cl100k_base");

/// The encoding this module carries.
#[cfg(feature = "o200k_base")]
const ENCODING: &str = "o200k_base";
#[cfg(feature = "cl100k_base")]
const ENCODING: &str = "cl100k_base";

/// The encoding's byte-pair encoder, built from its vocabulary.
#[cfg(feature = "o200k_base")]
fn encoder() -> Result<CoreBPE, String> {
    tiktoken_rs::o200k_base().map_err(|e| e.to_string())
}
#[cfg(feature = "cl100k_base")]
fn encoder() -> Result<CoreBPE, String> {
    tiktoken_rs::cl100k_base().map_err(|e| e.to_string())
}

/// Counts tokens exactly as OpenAI's tokenizer encodes text.
#[wasm_bindgen]
pub struct Tokenizer {
    bpe: CoreBPE,
}

#[wasm_bindgen]
impl Tokenizer {
    /// Builds the encoder (a few hundred milliseconds: its vocabulary is
    /// read into a table). Throws if the vocabulary does not load.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Result<Tokenizer, JsError> {
        encoder()
            .map(|bpe| Tokenizer { bpe })
            .map_err(|e| JsError::new(&format!("{ENCODING} did not load: {e}")))
    }

    /// The encoding's name.
    #[wasm_bindgen(getter)]
    pub fn encoding(&self) -> String {
        ENCODING.to_string()
    }

    /// The number of tokens `text` encodes to. Special-token text such as
    /// `<|endoftext|>` is counted as ordinary text, as it would be in a
    /// message.
    pub fn count(&self, text: &str) -> u32 {
        self.bpe.encode_ordinary(text).len() as u32
    }
}
