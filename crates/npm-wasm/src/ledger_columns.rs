//! The ledger handed to JavaScript in columns (`js/ledger.js` builds the
//! `ledger` object from them): one string of ids, typed arrays of numbers,
//! and the names of zones and reasons once per module.

use context_compiler::working_context::{ExclusionReason, InclusionReason, LedgerColumns};
use context_compiler::zones::Zone;
use js_sys::{Array, Float64Array, Uint32Array};
use wasm_bindgen::prelude::*;

/// A count or index as a JS number (exact below 2^53).
fn number(n: impl TryInto<u64>) -> f64 {
    n.try_into().unwrap_or(u64::MAX) as f64
}

/// A position in the columns as a `u32` (a wasm32 `usize`).
fn index(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// A context's ledger as it crosses to JavaScript, built on the first read
/// and kept with the context (see `WorkingContext.__ledgerColumns`).
pub(crate) struct LedgerHandover {
    ids: String,
    lengths: Vec<u32>,
    refs: Vec<u32>,
    included: Vec<f64>,
    excluded: Vec<f64>,
}

impl LedgerHandover {
    /// `columns` laid out for the crossing.
    pub(crate) fn new(columns: &LedgerColumns<'_>) -> Self {
        let mut ids = String::with_capacity(columns.ids.iter().map(|id| id.len()).sum());
        let mut lengths = Vec::with_capacity(columns.ids.len());
        for id in &columns.ids {
            ids.push_str(id);
            let units = if id.is_ascii() {
                id.len()
            } else {
                id.encode_utf16().count()
            };
            lengths.push(index(units));
        }
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
        LedgerHandover {
            ids,
            lengths,
            refs: columns.refs.iter().map(|&r| index(r)).collect(),
            included,
            excluded,
        }
    }

    /// `[ids, lengths, refs, included, excluded]`, copied out.
    pub(crate) fn to_js(&self) -> JsValue {
        Array::of5(
            &JsValue::from_str(&self.ids),
            &Uint32Array::from(&self.lengths[..]),
            &Uint32Array::from(&self.refs[..]),
            &Float64Array::from(&self.included[..]),
            &Float64Array::from(&self.excluded[..]),
        )
        .into()
    }
}

/// The names `__ledgerColumns` numbers: `[zones, included, excluded]`, each
/// an array indexed by the number (the names the `Ledger` type and the JSON
/// form use).
#[wasm_bindgen(js_name = "__ledgerNames", skip_typescript)]
pub fn ledger_names() -> JsValue {
    fn names<T: serde::Serialize>(all: &[T]) -> JsValue {
        let out = Array::new_with_length(all.len() as u32);
        for (i, item) in all.iter().enumerate() {
            let name = serde_json::to_value(item)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            out.set(i as u32, JsValue::from_str(&name));
        }
        out.into()
    }
    Array::of3(
        &names(&Zone::ALL),
        &names(&InclusionReason::ALL),
        &names(&ExclusionReason::ALL),
    )
    .into()
}
