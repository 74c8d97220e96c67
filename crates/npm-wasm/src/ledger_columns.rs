//! The ledger handed to JavaScript in columns (`js/ledger.js` builds the
//! `ledger` object from them): one string of ids, typed arrays of numbers,
//! and the names of zones and reasons once per module.

use context_compiler::working_context::{ExclusionReason, InclusionReason, LedgerColumns};
use context_compiler::zones::Zone;
use context_compiler_js::error::JsResult;
use js_sys::{Array, Float64Array, Object, Reflect, Uint32Array};
use wasm_bindgen::prelude::*;

/// A count or index as a JS number (exact below 2^53).
fn number(n: impl TryInto<u64>) -> f64 {
    n.try_into().unwrap_or(u64::MAX) as f64
}

/// A position in the columns as a `u32` (a wasm32 `usize`).
fn index(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn set(target: &Object, key: &str, value: &JsValue) -> JsResult<()> {
    Reflect::set(target, &JsValue::from_str(key), value)?;
    Ok(())
}

/// `columns` as `{ ids, lengths, refs, included, excluded }` (see
/// `WorkingContext.__ledgerColumns`).
pub(crate) fn to_js(columns: &LedgerColumns<'_>) -> JsResult<JsValue> {
    let mut text = String::with_capacity(columns.ids.iter().map(|id| id.len()).sum());
    let mut lengths = Vec::with_capacity(columns.ids.len());
    for id in &columns.ids {
        text.push_str(id);
        let units = if id.is_ascii() {
            id.len()
        } else {
            id.encode_utf16().count()
        };
        lengths.push(index(units));
    }
    let refs: Vec<u32> = columns.refs.iter().map(|&r| index(r)).collect();
    let mut included = Vec::with_capacity(columns.included.len() * 5);
    for row in &columns.included {
        included.extend([
            number(row.zone as usize),
            number(row.reason as usize),
            number(row.tokens),
            number(row.events.start),
            number(row.events.end),
        ]);
    }
    let mut excluded = Vec::with_capacity(columns.excluded.len() * 5);
    for row in &columns.excluded {
        excluded.extend([
            number(row.reason as usize),
            number(row.tokens),
            row.count.map_or(-1.0, number),
            number(row.events.start),
            number(row.events.end),
        ]);
    }
    let out = Object::new();
    set(&out, "ids", &JsValue::from_str(&text))?;
    set(&out, "lengths", &Uint32Array::from(&lengths[..]))?;
    set(&out, "refs", &Uint32Array::from(&refs[..]))?;
    set(&out, "included", &Float64Array::from(&included[..]))?;
    set(&out, "excluded", &Float64Array::from(&excluded[..]))?;
    Ok(out.into())
}

/// The names `__ledgerColumns` numbers: `{ zones, included, excluded }`,
/// each an array indexed by the number (the names the `Ledger` type and the
/// JSON form use).
#[wasm_bindgen(js_name = "__ledgerNames", skip_typescript)]
pub fn ledger_names() -> JsResult<JsValue> {
    fn names<T: serde::Serialize>(all: &[T]) -> JsValue {
        let out = Array::new();
        for item in all {
            let name = serde_json::to_value(item)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            out.push(&JsValue::from_str(&name));
        }
        out.into()
    }
    let out = Object::new();
    set(&out, "zones", &names(&Zone::ALL))?;
    set(&out, "included", &names(&InclusionReason::ALL))?;
    set(&out, "excluded", &names(&ExclusionReason::ALL))?;
    Ok(out.into())
}
