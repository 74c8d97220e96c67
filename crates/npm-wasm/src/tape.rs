//! The record wire format: a JSON value as a tape of numbers and one string,
//! so that `Session.record` hands event data in without a call across the
//! boundary per field (the encoder is `js/record.js`; a hand path kept
//! because it pays, see ARCHITECTURE.md).
//!
//! The encoder walks the value on its side and writes a tape: a tag
//! per value, with a string's length in UTF-16 units, a number's value, an
//! array's length or an object's member count after it (each member: its
//! key's length, then its value). The strings themselves, keys and values
//! in tape order, are joined into one `payload` string that crosses into
//! wasm once. The tape is checked as it is read: anything malformed is an
//! `INVALID_ARGUMENT` error, never a panic.

use serde_json::{Map, Number, Value};

use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler::session::MAX_DATA_DEPTH;
use context_compiler::tokens::ascii_len;

/// Largest integer a JS number represents exactly.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// `null`.
const NULL: f64 = 0.0;
/// `false`.
const FALSE: f64 = 1.0;
/// `true`.
const TRUE: f64 = 2.0;
/// A number; its value follows.
const NUMBER: f64 = 3.0;
/// A string; its length in UTF-16 units follows.
const STRING: f64 = 4.0;
/// An array; its length follows, then its items.
const ARRAY: f64 = 5.0;
/// An object; its member count follows, then each key's length and value.
const OBJECT: f64 = 6.0;

fn malformed(what: &str) -> Error {
    Error::new(
        ErrorCode::InvalidArgument,
        format!("malformed encoded event data: {what}"),
    )
}

/// Decodes the value `tape` and `payload` encode (all of both).
pub(crate) fn decode(tape: &[f64], payload: &str) -> Result<Value> {
    let mut reader = Reader {
        tape,
        at: 0,
        payload,
        cursor: 0,
    };
    let value = reader.value(0)?;
    if reader.at != tape.len() || reader.cursor != payload.len() {
        return Err(malformed("data after the value"));
    }
    Ok(value)
}

struct Reader<'a> {
    tape: &'a [f64],
    at: usize,
    payload: &'a str,
    cursor: usize,
}

impl Reader<'_> {
    fn next(&mut self) -> Result<f64> {
        let v = *self
            .tape
            .get(self.at)
            .ok_or_else(|| malformed("the tape ends early"))?;
        self.at += 1;
        Ok(v)
    }

    /// A length or count: a whole number no larger than what is left to
    /// read (each item takes at least one slot of the tape, each UTF-16
    /// unit at least one byte of the payload).
    fn count(&mut self, left: usize) -> Result<usize> {
        let v = self.next()?;
        if v >= 0.0 && v.fract() == 0.0 && v <= left as f64 {
            Ok(v as usize)
        } else {
            Err(malformed("a length out of range"))
        }
    }

    fn string(&mut self) -> Result<String> {
        let rest = &self.payload[self.cursor..];
        let units = self.count(rest.len())?;
        let len = utf16_prefix(rest, units).ok_or_else(|| malformed("a string length"))?;
        self.cursor += len;
        Ok(rest[..len].to_string())
    }

    fn value(&mut self, depth: usize) -> Result<Value> {
        if depth > MAX_DATA_DEPTH {
            return Err(Error::new(
                ErrorCode::NotSerializable,
                format!("event data nests deeper than {MAX_DATA_DEPTH} levels"),
            ));
        }
        let tag = self.next()?;
        Ok(match tag {
            NULL => Value::Null,
            FALSE => Value::Bool(false),
            TRUE => Value::Bool(true),
            NUMBER => number(self.next()?)?,
            STRING => Value::String(self.string()?),
            ARRAY => {
                let len = self.count(self.tape.len() - self.at)?;
                let mut items = Vec::with_capacity(len);
                for _ in 0..len {
                    items.push(self.value(depth + 1)?);
                }
                Value::Array(items)
            }
            OBJECT => {
                let len = self.count(self.tape.len() - self.at)?;
                let mut map = Map::with_capacity(len);
                for _ in 0..len {
                    let key = self.string()?;
                    map.insert(key, self.value(depth + 1)?);
                }
                Value::Object(map)
            }
            _ => return Err(malformed("an unknown tag")),
        })
    }
}

/// A number as JSON, as the JS binding has it: integers within the range a
/// double holds exactly as integers, other finite numbers as floats.
fn number(n: f64) -> Result<Value> {
    if !n.is_finite() {
        return Err(malformed("a non-finite number"));
    }
    if n.fract() == 0.0 && n.abs() <= MAX_SAFE_INTEGER {
        return Ok(Value::Number(Number::from(n as i64)));
    }
    Ok(Number::from_f64(n).map_or(Value::Null, Value::Number))
}

/// The byte length of the prefix of `s` that is `units` UTF-16 units long,
/// if a character boundary falls there.
pub(crate) fn utf16_prefix(s: &str, units: usize) -> Option<usize> {
    let bytes = s.as_bytes();
    if units <= bytes.len() && ascii_len(&bytes[..units]) == units {
        return Some(units);
    }
    let mut left = units;
    let mut end = 0;
    for c in s.chars() {
        if left == 0 {
            break;
        }
        left = left.checked_sub(c.len_utf16())?;
        end += c.len_utf8();
    }
    (left == 0).then_some(end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decodes_every_kind_of_value() {
        // {"a":[null,true,1.5,"é😀"],"k":false}
        let tape = [
            OBJECT, 2.0, 1.0, ARRAY, 4.0, NULL, TRUE, NUMBER, 1.5, STRING, 3.0, 1.0, FALSE,
        ];
        let v = decode(&tape, "aé😀k").unwrap();
        assert_eq!(v, json!({"a": [null, true, 1.5, "é😀"], "k": false}));
        assert_eq!(decode(&[NUMBER, 3.0], "").unwrap(), json!(3));
    }

    #[test]
    fn malformed_tapes_are_errors() {
        let bad: &[(&[f64], &str)] = &[
            (&[], ""),
            (&[9.0], ""),
            (&[STRING, 2.0], "a"),
            (&[STRING, 1.0], "😀"),
            (&[STRING, -1.0], ""),
            (&[ARRAY, 1e12], ""),
            (&[ARRAY, 1.5, NULL], ""),
            (&[OBJECT, 1.0, 5.0, NULL], "k"),
            (&[NULL, NULL], ""),
            (&[NULL], "extra"),
            (&[NUMBER, f64::NAN], ""),
        ];
        for (tape, payload) in bad {
            let e = decode(tape, payload).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{tape:?}");
        }
        let mut deep = [ARRAY, 1.0].repeat(MAX_DATA_DEPTH + 1);
        deep.push(NULL);
        assert_eq!(
            decode(&deep, "").unwrap_err().code(),
            ErrorCode::NotSerializable
        );
    }
}
