// `WorkingContext.ledger`, built here from the columns Rust hands over
// (crates/npm-wasm/src/ledger_columns.rs): one string of event ids with
// their lengths, indices into them, and rows of numbers. No JSON text is
// written or parsed, and the turns a summary stands for (named by its part
// and by its `compacted` entry) cross once. Rust builds the columns on the
// first read and keeps them with the context; each read builds a fresh
// object from them (a freed context throws, as every member does).
import * as glue from "../pkg/context_compiler.js";

/** `[zones, included, excluded]`: the names the columns number. */
let names = null;

/** The ids of `refs[start..end]`. */
function eventIds(ids, refs, start, end) {
  const out = new Array(end - start);
  for (let i = start; i < end; i++) out[i - start] = ids[refs[i]];
  return out;
}

/** The ledger of `ctx`, as the `Ledger` type describes it. */
function ledgerOf(ctx) {
  names ??= glue.__ledgerNames();
  const [zones, includedNames, excludedNames] = names;
  const [text, lengths, refs, rows, dropped] = ctx.__ledgerColumns();
  const ids = new Array(lengths.length);
  for (let i = 0, at = 0; i < ids.length; i++) {
    const end = at + lengths[i];
    ids[i] = text.slice(at, end);
    at = end;
  }
  const included = new Array(rows.length / 5);
  for (let r = 0, i = 0; r < rows.length; r += 5, i++) {
    included[i] = {
      zone: zones[rows[r]],
      eventIds: eventIds(ids, refs, rows[r + 3], rows[r + 4]),
      reason: includedNames[rows[r + 1]],
      tokens: rows[r + 2],
    };
  }
  const excluded = new Array(dropped.length / 5);
  for (let r = 0, i = 0; r < dropped.length; r += 5, i++) {
    const entry = {
      eventIds: eventIds(ids, refs, dropped[r + 3], dropped[r + 4]),
      reason: excludedNames[dropped[r]],
      tokens: dropped[r + 1],
    };
    if (dropped[r + 2] >= 0) entry.count = dropped[r + 2];
    excluded[i] = entry;
  }
  return { included, excluded };
}

Object.defineProperty(glue.WorkingContext.prototype, "ledger", {
  configurable: true,
  enumerable: false,
  get() {
    return ledgerOf(this);
  },
});
