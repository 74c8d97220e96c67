// `WorkingContext.ledger`, built here from the columns Rust hands over
// (crates/npm-wasm/src/ledger_columns.rs): one string of event ids with
// their lengths, indices into them, and rows of numbers. No JSON text is
// written or parsed, and the turns a summary stands for (named by its part
// and by its `compacted` entry) cross once. The columns are read on the
// first read of a context's ledger and kept with it; each read builds a
// fresh object from them, as a getter of plain data should.
import * as glue from "../pkg/context_compiler.js";

/** `{ zones, included, excluded }`: the names the columns number. */
let names = null;
/** Each context's columns, with their ids as strings. */
const read = new WeakMap();

/** The context's columns, read once. */
function columnsOf(ctx) {
  let columns = read.get(ctx);
  if (columns === undefined) {
    const c = ctx.__ledgerColumns();
    const ids = new Array(c.lengths.length);
    let at = 0;
    for (let i = 0; i < ids.length; i++) {
      const end = at + c.lengths[i];
      ids[i] = c.ids.slice(at, end);
      at = end;
    }
    columns = { ids, refs: c.refs, included: c.included, excluded: c.excluded };
    read.set(ctx, columns);
  }
  return columns;
}

/** The ids of `refs[start..end]`. */
function eventIds(ids, refs, start, end) {
  const out = new Array(end - start);
  for (let i = start; i < end; i++) out[i - start] = ids[refs[i]];
  return out;
}

/** The ledger of `ctx`, as the `Ledger` type describes it. */
function ledgerOf(ctx) {
  names ??= glue.__ledgerNames();
  const { ids, refs, included: rows, excluded: dropped } = columnsOf(ctx);
  const included = new Array(rows.length / 5);
  for (let r = 0, i = 0; r < rows.length; r += 5, i++) {
    included[i] = {
      zone: names.zones[rows[r]],
      eventIds: eventIds(ids, refs, rows[r + 3], rows[r + 4]),
      reason: names.included[rows[r + 1]],
      tokens: rows[r + 2],
    };
  }
  const excluded = new Array(dropped.length / 5);
  for (let r = 0, i = 0; r < dropped.length; r += 5, i++) {
    const entry = {
      eventIds: eventIds(ids, refs, dropped[r + 3], dropped[r + 4]),
      reason: names.excluded[dropped[r]],
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
