//! Sharing a compiler's rendered messages between calls. A full window
//! renders the same thousands of messages again at each turn: the objects
//! `toMessages` handed out for the previous compile of the same session (in
//! the same format, for the same model) that render the same again are
//! handed out again, and only the others are rendered (where the format
//! renders each message on its own), cross as JSON text and are parsed. Shared objects are frozen, so that one call's caller cannot
//! change what the next call returns; the array (and a request object
//! around it) is new at each call.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use js_sys::{Array, Object, Reflect};
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};

use context_compiler::error::Result;
use context_compiler::working_context::{render_each, ProviderFormat, Shared, WorkingContext};
use context_compiler_js::convert::value_to_js;

/// Sessions whose last rendering a compiler remembers.
const REMEMBERED: usize = 8;

/// The keys a request object keeps its message list under (Anthropic's
/// and the AI SDK's `messages`, Responses' `input`, Gemini's `contents`).
const LIST_KEYS: [&str; 3] = ["messages", "input", "contents"];

/// What a rendering is compared by at the next call.
enum Rendered {
    /// The context's messages, for a format that renders each on its own.
    Messages(Vec<Shared>),
    /// The rendered message list.
    Values(Vec<Value>),
}

/// What one session's last rendering was.
struct Rendering {
    session_id: String,
    format: ProviderFormat,
    model: Option<String>,
    rendered: Rendered,
    /// The frozen objects handed out for it, in its order.
    objects: Array,
}

/// A call's rendering: what the next call compares by, the objects handed
/// out, and the value returned.
type Handed = (Rendered, Array, JsValue);

/// A compiler's last renderings, newest first.
#[derive(Default)]
pub(crate) struct RenderMemo {
    renderings: RefCell<VecDeque<Rendering>>,
}

impl RenderMemo {
    /// `ctx` (compiled from `session_id`) rendered in `format` for `model`,
    /// as JS, its leading messages that render as the previous call's
    /// shared with it.
    pub(crate) fn to_js(
        &self,
        ctx: &WorkingContext,
        session_id: &str,
        format: ProviderFormat,
        model: Option<&str>,
    ) -> Result<JsValue> {
        let previous = self.take(session_id, format, model);
        let (rendered, objects, out) = match ctx.messages_rendered_alone(format) {
            Some(messages) => alone(messages, format, previous)?,
            None => {
                let request = match model {
                    Some(model) => ctx.to_provider_messages_for(format, model),
                    None => ctx.to_provider_messages(format),
                };
                match whole(request, previous)? {
                    Ok(done) => done,
                    Err(js) => return Ok(js),
                }
            }
        };
        let mut renderings = self.renderings.borrow_mut();
        renderings.push_front(Rendering {
            session_id: session_id.to_string(),
            format,
            model: model.map(str::to_string),
            rendered,
            objects,
        });
        renderings.truncate(REMEMBERED);
        Ok(out)
    }

    /// The session's last rendering, when it was in `format` for `model`;
    /// it is forgotten either way (the call replaces it).
    fn take(
        &self,
        session_id: &str,
        format: ProviderFormat,
        model: Option<&str>,
    ) -> Option<Rendering> {
        let mut renderings = self.renderings.borrow_mut();
        let i = renderings.iter().position(|r| r.session_id == session_id)?;
        renderings
            .remove(i)
            .filter(|r| r.format == format && r.model.as_deref() == model)
    }
}

/// How far ahead of the next unmatched message of the previous rendering
/// a message is looked for: a window that slid dropped its oldest turns
/// between the two, a few at a time.
const LOOK_AHEAD: usize = 256;

/// A run of a rendering's messages: objects of the previous rendering, by
/// their positions there, or messages rendered anew.
enum Segment {
    /// The previous rendering's objects `start..end`.
    Reuse(usize, usize),
    /// This many messages rendered anew.
    Fresh(usize),
}

/// How `now` is made of `before`'s items (in their order, a slid window's
/// dropped turns skipped, each looked for at most [`LOOK_AHEAD`] ahead of
/// the last found) and of items new to it, whose indices in `now` are
/// returned beside the plan.
fn plan<T>(before: &[T], now: &[T], same: impl Fn(&T, &T) -> bool) -> (Vec<Segment>, Vec<usize>) {
    let mut plan: Vec<Segment> = Vec::new();
    let mut fresh = Vec::new();
    let mut next = 0;
    for (i, item) in now.iter().enumerate() {
        let end = before.len().min(next + LOOK_AHEAD);
        match (next..end).find(|&k| same(&before[k], item)) {
            Some(k) => {
                match plan.last_mut() {
                    Some(Segment::Reuse(_, last)) if *last == k => *last += 1,
                    _ => plan.push(Segment::Reuse(k, k + 1)),
                }
                next = k + 1;
            }
            None => {
                match plan.last_mut() {
                    Some(Segment::Fresh(n)) => *n += 1,
                    _ => plan.push(Segment::Fresh(1)),
                }
                fresh.push(i);
            }
        }
    }
    (plan, fresh)
}

/// The objects `plan` makes: runs of `before`'s, and `fresh`'s in order.
fn assemble(plan: Vec<Segment>, before: &Array, fresh: &Array) -> Array {
    let mut objects = Array::new();
    let mut at = 0u32;
    for segment in plan {
        match segment {
            Segment::Reuse(start, end) => {
                objects = objects.concat(&before.slice(start as u32, end as u32));
            }
            Segment::Fresh(n) => {
                for _ in 0..n {
                    objects.push(&fresh.get(at));
                    at += 1;
                }
            }
        }
    }
    objects
}

/// The previous rendering's items (those `items` takes out of it) and
/// objects; none when there was none or `items` takes none.
fn previous_of<T>(
    previous: Option<Rendering>,
    items: fn(Rendered) -> Option<Vec<T>>,
) -> (Vec<T>, Array) {
    previous
        .and_then(|p| Some((items(p.rendered)?, p.objects)))
        .unwrap_or_else(|| (Vec::new(), Array::new()))
}

/// A format that renders each message on its own: each message that
/// renders as one of the previous call's is handed out again; only the
/// others are copied and rendered.
fn alone(
    messages: Vec<Shared>,
    format: ProviderFormat,
    previous: Option<Rendering>,
) -> Result<Handed> {
    let (before, before_objects) = previous_of(previous, |r| match r {
        Rendered::Messages(m) => Some(m),
        Rendered::Values(_) => None,
    });
    // The same allocation renders the same (a message shared from the
    // session, unchanged since): no need to compare its fields.
    let (plan, fresh) = plan(&before, &messages, |a, b| {
        Rc::ptr_eq(a, b) || a.renders_as(b)
    });
    let fresh: Vec<Shared> = fresh.into_iter().map(|i| Rc::clone(&messages[i])).collect();
    let parsed = frozen(&Value::Array(render_each(fresh, format)))?;
    let objects = assemble(plan, &before_objects, &parsed);
    let out = objects.slice(0, objects.length()).into();
    Ok((Rendered::Messages(messages), objects, out))
}

/// Any format: the whole request rendered, each item of its message list
/// that is one of the previous call's (as [`alone`] finds them, compared
/// as JSON) handed out again; only the others cross. `Err` holds a request
/// with no list to share.
fn whole(
    mut request: Value,
    previous: Option<Rendering>,
) -> Result<std::result::Result<Handed, JsValue>> {
    let key = LIST_KEYS
        .into_iter()
        .find(|k| request.get(k).is_some_and(Value::is_array));
    let list = match (&mut request, key) {
        (Value::Array(list), _) => std::mem::take(list),
        (Value::Object(object), Some(k)) => match object.get_mut(k) {
            Some(Value::Array(list)) => std::mem::take(list),
            _ => return Ok(Err(value_to_js(&request)?)),
        },
        _ => return Ok(Err(value_to_js(&request)?)),
    };
    let (before, before_objects) = previous_of(previous, |r| match r {
        Rendered::Values(v) => Some(v),
        Rendered::Messages(_) => None,
    });
    let (plan, fresh) = plan(&before, &list, same);
    drop(before);
    let fresh = Value::Array(fresh.into_iter().map(|i| list[i].clone()).collect());
    let objects = assemble(plan, &before_objects, &frozen(&fresh)?);
    let out = match (key, &request) {
        (Some(k), Value::Object(_)) => {
            let outer = value_to_js(&request)?;
            let _ = Reflect::set(&outer, &k.into(), &objects.slice(0, objects.length()));
            outer
        }
        _ => objects.slice(0, objects.length()).into(),
    };
    Ok(Ok((Rendered::Values(list), objects, out)))
}

/// The JSON array `list` as JS, each of its items frozen.
fn frozen(list: &Value) -> Result<Array> {
    let parsed: Array = value_to_js(list)?.unchecked_into();
    for item in parsed.iter() {
        freeze(&item);
    }
    Ok(parsed)
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
