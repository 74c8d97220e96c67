//! The two buffers in wasm memory that `record` and `append` (js/record.js)
//! hand an event in through, and get its id, timestamp and count back in;
//! `countTokens` hands its string in through the same text buffer
//! (js/text-buffers.js writes them).
//!
//! Handing the event's tape and strings in as arguments cost an allocation
//! and a copy of each, the glue's character loop over the strings, and a
//! string back (formatted here, decoded there): about half of what recording
//! a short event cost. Instead, js/record.js writes straight into two
//! buffers this module owns (the tape into one, the kind and the payload,
//! UTF-8 by `TextEncoder.encodeInto`, into the other) and calls with their
//! lengths; the answer goes back into the same buffers.
//!
//! Everything in the buffers is checked as it is read, as a foreign tape
//! is: a malformed length, tape or text is `INVALID_ARGUMENT`, never a
//! trap. The buffers are taken apart before anything can call out to
//! JavaScript (an options getter, a token counter, a bus), so a `record`
//! made meanwhile may reuse them; the answer is written last.

use std::cell::RefCell;

use serde_json::Value;
use wasm_bindgen::prelude::*;

use crate::tape;
use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler::session::SessionEvent;

/// The fewest numbers the tape buffer holds once sized (the answer's four).
const MIN_TAPE: usize = 8;
/// The fewest bytes the text buffer holds once sized (an event id).
const MIN_TEXT: usize = 64;
/// A text buffer larger than this is let go after the event that needed it.
const KEEP_TEXT: usize = 1 << 20;

thread_local! {
    static TAPE: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
    static TEXT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// The data of the event just recorded, when recording redacted it.
    static REDACTED: RefCell<Option<Value>> = const { RefCell::new(None) };
}

/// Grows `buffer` to at least `len` items (and `min`), keeping what it
/// holds; a buffer that is long enough stays where it is.
fn grow<T: Copy + Default>(buffer: &mut Vec<T>, len: usize, min: usize) -> *mut T {
    let len = len.max(min);
    if buffer.len() < len {
        buffer.resize(len, T::default());
    }
    buffer.as_mut_ptr()
}

/// Grows the tape buffer to hold at least `len` numbers, keeping what it
/// holds, and returns where it starts (which changes only when it grows).
#[wasm_bindgen(js_name = __recordTapeBuffer, skip_typescript)]
pub fn record_tape_buffer(len: usize) -> *mut f64 {
    TAPE.with(|cell| grow(&mut cell.borrow_mut(), len, MIN_TAPE))
}

/// Grows the text buffer to hold at least `len` bytes, keeping what it
/// holds, and returns where it starts (which changes only when it grows);
/// `len` 0 lets a buffer larger than [`KEEP_TEXT`] go for a small one.
#[wasm_bindgen(js_name = __recordTextBuffer, skip_typescript)]
pub fn record_text_buffer(len: usize) -> *mut u8 {
    TEXT.with(|cell| {
        let mut text = cell.borrow_mut();
        if len == 0 && text.len() > KEEP_TEXT {
            *text = Vec::new();
        }
        grow(&mut text, len, MIN_TEXT)
    })
}

/// The module's memory, which the buffers live in.
#[wasm_bindgen(js_name = __memory, skip_typescript)]
pub fn memory() -> JsValue {
    wasm_bindgen::memory()
}

fn malformed(what: &str) -> Error {
    Error::new(
        ErrorCode::InvalidArgument,
        format!("malformed encoded event data: {what}"),
    )
}

/// The kind and data js/record.js wrote: the first `tape_len` numbers of
/// the tape buffer, and the first `text_len` bytes of the text buffer,
/// which hold the kind (`kind_units` UTF-16 units long) then the payload.
pub(crate) fn take(kind_units: u32, tape_len: u32, text_len: u32) -> Result<(String, Value)> {
    TEXT.with(|text| {
        TAPE.with(|numbers| {
            let text = text.borrow();
            let numbers = numbers.borrow();
            let bytes = text
                .get(..text_len as usize)
                .ok_or_else(|| malformed("the text is longer than its buffer"))?;
            let numbers = numbers
                .get(..tape_len as usize)
                .ok_or_else(|| malformed("the tape is longer than its buffer"))?;
            let text =
                std::str::from_utf8(bytes).map_err(|_| malformed("the text is not UTF-8"))?;
            let split = tape::utf16_prefix(text, kind_units as usize)
                .ok_or_else(|| malformed("the kind's length"))?;
            let (kind, payload) = text.split_at(split);
            Ok((kind.to_string(), tape::decode(numbers, payload)?))
        })
    })
}

/// Runs `f` on the first `text_len` bytes of the text buffer, as
/// `countTokens` (js/api.js) wrote a string there; `f` answers `None` when
/// they are not UTF-8 (it checks them as it reads them).
pub(crate) fn with_text_bytes<T>(text_len: u32, f: impl FnOnce(&[u8]) -> Option<T>) -> Result<T> {
    TEXT.with(|text| {
        let text = text.borrow();
        let bytes = text
            .get(..text_len as usize)
            .ok_or_else(|| malformed("the text is longer than its buffer"))?;
        f(bytes).ok_or_else(|| malformed("the text is not UTF-8"))
    })
}

/// Writes what js/record.js builds the returned event from: the timestamp
/// and the token estimate into the tape buffer, the id's length after them
/// and whether recording redacted the data (then the recorded data waits in
/// [`take_redacted_data`]), and the id into the text buffer. Buffers never
/// sized get nothing (the event could not have been read from them).
pub(crate) fn answer(event: &SessionEvent, redacted: bool) {
    let id = event.event_id.as_bytes();
    REDACTED.with(|cell| *cell.borrow_mut() = redacted.then(|| event.data.clone()));
    TEXT.with(|cell| {
        let mut text = cell.borrow_mut();
        if text.len() < id.len() {
            return;
        }
        text[..id.len()].copy_from_slice(id);
        TAPE.with(|cell| {
            if let Some([timestamp, estimate, id_len, redacted_flag, ..]) =
                cell.borrow_mut().get_mut(..MIN_TAPE)
            {
                *timestamp = event.timestamp;
                *estimate = event.token_estimate as f64;
                *id_len = id.len() as f64;
                *redacted_flag = if redacted { 1.0 } else { 0.0 };
            }
        });
    });
}

/// The data of the event just recorded, when recording redacted it (the
/// data js/record.js walked still holds the secrets); `undefined` otherwise.
#[wasm_bindgen(js_name = __takeRedactedData, skip_typescript)]
pub fn take_redacted_data() -> JsValue {
    REDACTED
        .with(|cell| cell.borrow_mut().take())
        .and_then(|data| context_compiler_js::convert::to_js(&data).ok())
        .unwrap_or(JsValue::UNDEFINED)
}
