//! [`JsBytes`]: the values of the JS key-value and file stores, kept in JS
//! memory. An artifact passes through the store as the caller's own
//! `Uint8Array` (hashed by the host's crypto, then copied once into the
//! record the store writes), and comes back as a view of the value the KV
//! returned (or, when chunked, the chunks joined into a new array), verified
//! there: never copied into wasm memory and out again.

use std::ops::Range;

use async_trait::async_trait;
use js_sys::{ArrayBuffer, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen::JsValue;

use context_compiler::artifacts::Hasher;
use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler::kv::KvValue;
use context_compiler_js::convert::describe;
use context_compiler_js::hash::sha256_js;
use context_compiler_js::text::js_string;

/// Bytes in a JS `Uint8Array`.
pub(crate) struct JsBytes(pub(crate) Uint8Array);

impl JsBytes {
    /// A new `Uint8Array` of `len` bytes (a plain one: never a Node `Buffer`).
    fn zeroed(len: usize) -> Uint8Array {
        Uint8Array::new_with_length(len as u32)
    }

    /// The bytes of `value`, a store's answer or a caller's content: a
    /// `Uint8Array` (Node `Buffer`s included) or an `ArrayBuffer` as they are,
    /// a string as its UTF-8; `None` for `null` / `undefined`. Anything else
    /// is `None` too; the caller says what it expected.
    fn of(value: &JsValue) -> Option<JsBytes> {
        if let Some(a) = value.dyn_ref::<Uint8Array>() {
            return Some(JsBytes(a.clone()));
        }
        if let Some(buf) = value.dyn_ref::<ArrayBuffer>() {
            return Some(JsBytes(Uint8Array::new(buf)));
        }
        js_string(value).map(|s| JsBytes::from_parts(&[s.as_bytes()]))
    }
}

/// The bytes of a value a KV or file system returned: `Uint8Array`s (Node
/// `Buffer`s included), `ArrayBuffer`s and strings (as UTF-8); `None` for
/// `null` / `undefined`. Other views (`DataView`, wider typed arrays) are
/// `STORE_INVALID_VALUE`, not bytes to guess at.
pub(crate) fn stored_bytes(value: &JsValue, what: &str) -> Result<Option<JsBytes>> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    JsBytes::of(value).map(Some).ok_or_else(|| {
        Error::new(
            ErrorCode::StoreInvalidValue,
            format!("{what} must be bytes (Uint8Array or ArrayBuffer), a string, null or undefined (got {})", describe(value)),
        )
    })
}

/// The content a caller hands to `store`, in JS memory: a `Uint8Array` or
/// `ArrayBuffer` as it is, any other view as the bytes it views, a string
/// as its UTF-8; otherwise `INVALID_ARGUMENT`.
pub(crate) fn content_bytes(value: &JsValue, what: &str) -> Result<JsBytes> {
    if let Some(bytes) = JsBytes::of(value) {
        return Ok(bytes);
    }
    if ArrayBuffer::is_view(value) {
        let view: &js_sys::DataView = value.unchecked_ref();
        if let Some(buffer) = view.buffer().dyn_ref::<ArrayBuffer>() {
            return Ok(JsBytes(Uint8Array::new_with_byte_offset_and_length(
                buffer,
                view.byte_offset() as u32,
                view.byte_length() as u32,
            )));
        }
    }
    Err(Error::new(
        ErrorCode::InvalidArgument,
        format!(
            "{what} must be a Uint8Array, an ArrayBuffer or a string (got {})",
            describe(value)
        ),
    ))
}

#[async_trait(?Send)]
impl KvValue for JsBytes {
    fn from_parts(parts: &[&[u8]]) -> Self {
        let out = Self::zeroed(parts.iter().map(|p| p.len()).sum());
        let mut at = 0u32;
        for part in parts {
            let end = at + part.len() as u32;
            out.subarray(at, end).copy_from(part);
            at = end;
        }
        JsBytes(out)
    }

    fn joined(head: &[u8], body: &Self) -> Self {
        let out = Self::zeroed(head.len() + body.len());
        out.subarray(0, head.len() as u32).copy_from(head);
        out.set(&body.0, head.len() as u32);
        JsBytes(out)
    }

    fn concat(parts: &[Self]) -> Self {
        let out = Self::zeroed(parts.iter().map(KvValue::len).sum());
        let mut at = 0u32;
        for part in parts {
            out.set(&part.0, at);
            at += part.0.length();
        }
        JsBytes(out)
    }

    fn snapshot(&self) -> Self {
        // `new Uint8Array(view)` copies; a Node `Buffer`'s own `slice` would
        // not.
        JsBytes(Uint8Array::new(&self.0))
    }

    fn len(&self) -> usize {
        self.0.length() as usize
    }

    fn position(&self, byte: u8) -> Option<usize> {
        usize::try_from(self.0.index_of(byte, 0)).ok()
    }

    fn copy_range(&self, range: Range<usize>) -> Vec<u8> {
        self.0
            .subarray(range.start as u32, range.end as u32)
            .to_vec()
    }

    fn range(&self, range: Range<usize>) -> Self {
        JsBytes(self.0.subarray(range.start as u32, range.end as u32))
    }

    fn tail(self, start: usize) -> Self {
        // A view, not a copy: a plain `Uint8Array` (never the `Buffer` a
        // Node store may return) over the bytes after the header.
        JsBytes(Uint8Array::new_with_byte_offset_and_length(
            &self.0.buffer(),
            self.0.byte_offset() + start as u32,
            self.0.length() - start as u32,
        ))
    }

    fn into_vec(self) -> Vec<u8> {
        self.0.to_vec()
    }

    async fn sha256(&self, _hasher: &dyn Hasher) -> Result<[u8; 32]> {
        Ok(sha256_js(&self.0).await)
    }
}
