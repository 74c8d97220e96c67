//! JS strings into Rust at memory speed.
//!
//! wasm-bindgen copies a string argument with a JavaScript loop over its
//! ASCII prefix before it calls `TextEncoder.encodeInto` for the rest: about
//! 300 MB/s, the slowest step of recording a large tool output. Long strings
//! go straight through `encodeInto` into a buffer in wasm memory instead
//! (several GB/s in V8); short ones keep the glue's path, whose fixed cost is
//! lower.
//!
//! One of the crate's two modules allowed `unsafe` (with `alloc.rs`): a
//! view of wasm memory that `encodeInto` writes into.
#![allow(unsafe_code)]

use std::cell::OnceCell;

use js_sys::{JsString, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Strings shorter than this (in UTF-16 units) take wasm-bindgen's path.
const SHORT: u32 = 256;

#[wasm_bindgen]
extern "C" {
    /// The host's `TextEncoder`.
    type Utf8Encoder;

    #[wasm_bindgen(constructor, js_class = "TextEncoder")]
    fn new() -> Utf8Encoder;

    /// `encodeInto(source, destination)`: `{ read, written }`.
    #[wasm_bindgen(method, js_name = encodeInto)]
    fn encode_into(this: &Utf8Encoder, source: &JsString, destination: &Uint8Array) -> Progress;

    type Progress;

    /// UTF-16 units of the source consumed.
    #[wasm_bindgen(method, getter)]
    fn read(this: &Progress) -> u32;

    /// UTF-8 bytes written.
    #[wasm_bindgen(method, getter)]
    fn written(this: &Progress) -> u32;
}

thread_local! {
    static ENCODER: OnceCell<Utf8Encoder> = const { OnceCell::new() };
}

/// The string `value` holds, as UTF-8 (lone surrogates become U+FFFD, as
/// wasm-bindgen's own conversion does), or `None` if it is not a string.
pub fn js_string(value: &JsValue) -> Option<String> {
    let s = value.dyn_ref::<JsString>()?;
    let units = s.length();
    if units < SHORT {
        return value.as_string();
    }
    ENCODER.with(|cell| {
        let encoder = cell.get_or_init(Utf8Encoder::new);
        Some(encode(encoder, s, units as usize))
    })
}

/// Encodes `s` (`units` UTF-16 units long) into a new `String`.
fn encode(encoder: &Utf8Encoder, s: &JsString, units: usize) -> String {
    // Room for all-ASCII text first; the rest, if any, takes up to 3 bytes
    // a unit.
    let mut buf: Vec<u8> = Vec::with_capacity(units);
    let mut source = s.clone();
    let mut left = units;
    loop {
        let spare = buf.spare_capacity_mut();
        let room = spare.len();
        // SAFETY: the view covers the vector's spare capacity, which nothing
        // else uses until `set_len` below, and no allocation (which could
        // grow and detach the memory) happens while the view is alive.
        let view = unsafe { Uint8Array::view_mut_raw(spare.as_mut_ptr().cast(), spare.len()) };
        let progress = encoder.encode_into(&source, &view);
        drop(view);
        let written = (progress.written() as usize).min(spare.len());
        // SAFETY: `encodeInto` initialised `written` bytes of the spare
        // capacity (and never reports more than the view's length).
        unsafe { buf.set_len(buf.len() + written) };
        let read = progress.read() as usize;
        // Done, or an encoder that makes no progress with room for any
        // character (4 bytes): stop rather than loop.
        if read >= left || (read == 0 && room >= 4) {
            break;
        }
        left -= read;
        source = source.slice(read as u32, source.length());
        buf.reserve(left * 3);
    }
    // `encodeInto` writes only valid UTF-8; checked all the same, since a
    // polyfilled encoder is not ours to trust.
    String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}
