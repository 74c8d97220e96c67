//! Sharing a compiler's rendered messages between calls. A full window
//! renders the same thousands of messages again at each turn: the objects
//! `toMessages` handed out for the previous compile of the same session (in
//! the same format, for the same model) that render the same again are
//! handed out again, and only the messages after them cross as JSON text to
//! be parsed. Shared objects are frozen, so that one call's caller cannot
//! change what the next call returns; the array (and a request object
//! around it) is new at each call.

use std::cell::RefCell;
use std::collections::VecDeque;

use js_sys::{Array, Object, Reflect};
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};

use context_compiler::error::Result;
use context_compiler::working_context::ProviderFormat;
use context_compiler_js::convert::value_to_js;

/// Sessions whose last rendering a compiler remembers.
const REMEMBERED: usize = 8;

/// The keys a request object keeps its message list under (Anthropic's
/// and the AI SDK's `messages`, Responses' `input`, Gemini's `contents`).
const LIST_KEYS: [&str; 3] = ["messages", "input", "contents"];

/// What one session's last rendering was.
struct Rendering {
    session_id: String,
    format: ProviderFormat,
    model: Option<String>,
    /// The message list rendered.
    values: Vec<Value>,
    /// The frozen objects handed out for it, in its order.
    objects: Array,
}

/// A compiler's last renderings, newest first.
#[derive(Default)]
pub(crate) struct RenderMemo {
    renderings: RefCell<VecDeque<Rendering>>,
}

impl RenderMemo {
    /// `request` (a context of `session_id` rendered in `format` for
    /// `model`) as JS, its leading messages that render as the previous
    /// call's shared with it.
    pub(crate) fn to_js(
        &self,
        session_id: &str,
        format: ProviderFormat,
        model: Option<&str>,
        mut request: Value,
    ) -> Result<JsValue> {
        let key = LIST_KEYS
            .into_iter()
            .find(|k| request.get(k).is_some_and(Value::is_array));
        let list = match (&mut request, key) {
            (Value::Array(list), _) => std::mem::take(list),
            (Value::Object(object), Some(k)) => match object.get_mut(k) {
                Some(Value::Array(list)) => std::mem::take(list),
                _ => return value_to_js(&request),
            },
            _ => return value_to_js(&request),
        };
        let mut renderings = self.renderings.borrow_mut();
        let previous = renderings
            .iter()
            .position(|r| r.session_id == session_id)
            .and_then(|i| renderings.remove(i))
            .filter(|r| r.format == format && r.model.as_deref() == model);
        let (shared, objects) = match &previous {
            Some(r) => {
                let same = r
                    .values
                    .iter()
                    .zip(&list)
                    .take_while(|(a, b)| same(a, b))
                    .count();
                (same, r.objects.slice(0, same as u32))
            }
            None => (0, Array::new()),
        };
        drop(previous);
        let mut list = list;
        let tail = Value::Array(list.split_off(shared));
        let parsed: Array = value_to_js(&tail)?.unchecked_into();
        for item in parsed.iter() {
            freeze(&item);
            objects.push(&item);
        }
        if let Value::Array(tail) = tail {
            list.extend(tail);
        }
        let out = match (key, &request) {
            (Some(k), Value::Object(_)) => {
                let outer = value_to_js(&request)?;
                let _ = Reflect::set(&outer, &k.into(), &objects.slice(0, objects.length()));
                outer
            }
            _ => objects.slice(0, objects.length()).into(),
        };
        renderings.push_front(Rendering {
            session_id: session_id.to_string(),
            format,
            model: model.map(str::to_string),
            values: list,
            objects,
        });
        renderings.truncate(REMEMBERED);
        Ok(out)
    }
}

/// Whether `a` and `b` are the same JSON, their objects' keys in the same
/// order (what renders the same text); compared in order, without looking
/// keys up.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b.iter())
                    .all(|((ka, va), (kb, vb))| ka == kb && same(va, vb))
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        _ => a == b,
    }
}

/// Freezes `value` and every object and array in it.
fn freeze(value: &JsValue) {
    if !value.is_object() {
        return;
    }
    let object: &Object = value.unchecked_ref();
    for child in Object::values(object).iter() {
        freeze(&child);
    }
    Object::freeze(object);
}
