// `Session.record` and `EventLog.append`: the event's data is walked here,
// in JavaScript, and crosses into wasm in one call.
//
// The walk makes the checks `js_to_json` (crates/js/src/convert.rs) makes, with
// its messages, and builds two things in one pass:
// - a tape (crates/npm-wasm/src/tape.rs): a Float64Array of tags, lengths and
//   numbers, and one string joining the kind and every key and string
//   value, which Rust decodes into the event's JSON;
// - the JSON form of the data as JS values, which the returned event
//   carries (strings are shared, not copied).
// Both go into two buffers in wasm memory (./text-buffers.js),
// the string by `TextEncoder.encodeInto`, and Rust answers there with the
// event's id, timestamp and token estimate.
// A field-by-field walk from Rust cost a call across the boundary for every
// type check and property read, and the returned event a serialisation in
// Rust and a `JSON.parse` here: most of what recording cost. Handing the
// tape and the string in as arguments, and a string back, cost half of
// what was left for a short event.
import * as glue from "../pkg/context_compiler.js";
import { readAnswer, releaseLargeText, writeTape, writeText } from "./text-buffers.js";

/** Deepest nesting event data may have (`MAX_DATA_DEPTH` in src/session/log.rs). */
const MAX_DEPTH = 100;
const NULL = 0;
const FALSE = 1;
const TRUE = 2;
const NUMBER = 3;
const STRING = 4;
const ARRAY = 5;
const OBJECT = 6;
/** Strings at least this long are written on their own, not joined to the payload. */
const LONG_STRING = 256;

/** One walk's state. */
class Encoder {
  constructor() {
    this.tape = new Float64Array(1024);
    this.length = 0;
    this.payload = "";
    /** The payload so far, when long strings split it (each written on its own). */
    this.parts = [];
    /** The keys from the data's root to the value being walked. */
    this.path = [];
    /** The objects being walked (a value among them is a cycle). */
    this.ancestors = [];
    this.busy = false;
  }

  push(x) {
    if (this.length === this.tape.length) {
      const grown = new Float64Array(this.tape.length * 2);
      grown.set(this.tape);
      this.tape = grown;
    }
    this.tape[this.length++] = x;
  }
}

/** The encoder kept between calls; a `toJSON` that records meanwhile gets its own. */
const shared = new Encoder();

/** The error Rust raises for data that is not JSON, naming where it is. */
function notJson(enc, what) {
  let where = "data";
  for (const key of enc.path) where += typeof key === "number" ? `[${key}]` : `.${key}`;
  const e = new Error(`${where}: ${what} cannot be represented as JSON`);
  e.name = "ContextCompilerError";
  e.code = "NOT_SERIALIZABLE";
  return e;
}

function thrownMessage(e) {
  if (e instanceof Error) {
    try {
      const m = e.message;
      return typeof m === "string" ? m : "an Error without a string message";
    } catch {
      return "an Error whose message could not be read";
    }
  }
  if (typeof e === "string") return e;
  if (e === undefined) return "undefined";
  try {
    return JSON.stringify(e) ?? "a value that is not an Error";
  } catch {
    return "a value that is not an Error";
  }
}

/** `s` as it is stored: lone surrogates become U+FFFD, as UTF-8 has them. */
function wellFormed(s) {
  return s.isWellFormed() ? s : s.toWellFormed();
}

function is(value, Class) {
  try {
    return value instanceof Class;
  } catch {
    return false;
  }
}

/** Writes `v` to the tape and returns its JSON form. */
function encode(enc, v, depth) {
  switch (typeof v) {
    case "string":
      enc.push(STRING);
      enc.push(v.length);
      if (v.length >= LONG_STRING) {
        // Written on its own: joined, it would be copied once more.
        enc.parts.push(enc.payload, v);
        enc.payload = "";
      } else {
        enc.payload += v;
      }
      return wellFormed(v);
    case "number":
      if (!Number.isFinite(v)) throw notJson(enc, "a non-finite number (NaN or Infinity)");
      enc.push(NUMBER);
      enc.push(v);
      return v === 0 ? 0 : v;
    case "boolean":
      enc.push(v ? TRUE : FALSE);
      return v;
    case "undefined":
      throw notJson(enc, "undefined");
    case "function":
      throw notJson(enc, "a function");
    case "symbol":
      throw notJson(enc, "a symbol");
    case "bigint":
      throw notJson(enc, "a bigint");
    case "object":
      if (v === null) {
        enc.push(NULL);
        return null;
      }
      return encodeObject(enc, v, depth);
    default:
      throw notJson(enc, "this value");
  }
}

function encodeObject(enc, v, depth) {
  if (depth >= MAX_DEPTH) throw notJson(enc, `data nested deeper than ${MAX_DEPTH} levels`);
  if (enc.ancestors.includes(v)) throw notJson(enc, "a cyclic reference");
  if (is(v, Map) || is(v, Set) || is(v, ArrayBuffer) || ArrayBuffer.isView(v) || is(v, Promise)) {
    throw notJson(enc, "a Map, Set, Promise or binary buffer");
  }
  let toJSON;
  try {
    toJSON = v.toJSON;
  } catch {
    toJSON = undefined;
  }
  enc.ancestors.push(v);
  try {
    if (typeof toJSON === "function") {
      let replaced;
      try {
        replaced = toJSON.call(v);
      } catch (e) {
        throw notJson(enc, `a value whose toJSON threw (${thrownMessage(e)})`);
      }
      return encode(enc, replaced, depth + 1);
    }
    let array;
    try {
      array = Array.isArray(v);
    } catch {
      throw notJson(enc, "an object whose type check threw");
    }
    return array ? encodeArray(enc, v, depth) : encodeMembers(enc, v, depth);
  } finally {
    enc.ancestors.pop();
  }
}

function encodeArray(enc, v, depth) {
  let n;
  try {
    n = v.length;
  } catch {
    throw notJson(enc, "an object whose length threw");
  }
  // As Rust reads it: a number, cut to an unsigned 32-bit count.
  n = typeof n === "number" && n > 0 ? Math.min(Math.floor(n), 4294967295) : 0;
  enc.push(ARRAY);
  enc.push(n);
  const json = [];
  for (let i = 0; i < n; i++) {
    let item;
    try {
      item = v[i];
    } catch {
      throw notJson(enc, "an object whose element getter threw");
    }
    enc.path.push(i);
    json.push(encode(enc, item, depth + 1));
    enc.path.pop();
  }
  return json;
}

function encodeMembers(enc, v, depth) {
  let keys;
  try {
    keys = Object.keys(v);
  } catch {
    throw notJson(enc, "an object whose key listing threw");
  }
  enc.push(OBJECT);
  const countAt = enc.length;
  enc.push(0);
  const json = {};
  let count = 0;
  for (const key of keys) {
    let item;
    try {
      item = v[key];
    } catch {
      throw notJson(enc, "an object whose getter threw");
    }
    if (item === undefined) continue;
    enc.push(key.length);
    enc.payload += key;
    enc.path.push(key);
    const value = encode(enc, item, depth + 1);
    enc.path.pop();
    const name = wellFormed(key);
    // Defined, not assigned: a "__proto__" key stays data.
    if (name === "__proto__") Object.defineProperty(json, name, { value, enumerable: true, writable: true, configurable: true });
    else json[name] = value;
    count++;
  }
  enc.tape[countAt] = count;
  return json;
}

/**
 * What a record hands Rust of its options (crates/npm-wasm/src/session.rs,
 * `buffered_estimate`), set by `readOptions`: the token estimate when
 * `options.tokenEstimate` is a count (-1: none given), whether to redact
 * (`options.redact` when a boolean, by default true), or options for Rust
 * to read and reject with its own messages (anything else). Reading them
 * here spares a read across the boundary per record, which cost more than
 * counting a short event (and `{ redact: false }` a fifth of recording an
 * agent's trace).
 */
const given = { estimate: -1, redact: true, options: undefined };

function readOptions(options, withRedact) {
  let estimate = -1;
  let redact = true;
  let rest;
  // An array is not an options object: Rust rejects it, naming it.
  if (typeof options === "object" && options !== null && !Array.isArray(options)) {
    let value;
    let redactValue;
    let threw = false;
    try {
      value = options.tokenEstimate;
      if (withRedact) redactValue = options.redact;
    } catch {
      threw = true;
    }
    // Rust reads a getter that threw once more, and names the option; and
    // names a `redact` that is not a boolean (null is the default).
    if (threw || (redactValue !== undefined && redactValue !== null && typeof redactValue !== "boolean")) {
      rest = options;
    } else {
      redact = redactValue !== false;
      if (Number.isSafeInteger(value) && value >= 0) estimate = value;
      else if (value !== undefined && value !== null) rest = { tokenEstimate: value };
    }
  } else if (options !== undefined && options !== null) {
    rest = options;
  }
  // Set last: a getter that records sets them too, for its own record.
  given.estimate = estimate;
  given.redact = redact;
  given.options = rest;
}

/**
 * Encodes `data`, reads `options` (`redact` too when `withRedact`: a
 * session's record has it, an event log's append does not), writes `kind`
 * and the data into the record buffers and calls `write(kind, kindUnits,
 * tapeLength, textLength, estimate, redact, options, now)`, which records it
 * and answers in the buffers; returns the event.
 */
function recordWith(kind, data, options, withRedact, write) {
  if (typeof kind !== "string") {
    // Rust names what is wrong with the kind, before the data is looked at.
    return write(kind, -1, 0, 0, -1, true, undefined);
  }
  const enc = shared.busy ? new Encoder() : shared;
  enc.busy = true;
  enc.length = 0;
  enc.payload = kind;
  try {
    const json = encode(enc, data, 0);
    // An options getter may record meanwhile: read them before the
    // buffers are written. Nothing below runs JavaScript of the caller's
    // until `write`, so nothing else writes the buffers meanwhile.
    readOptions(options, withRedact);
    const { estimate, redact, options: rest } = given;
    given.options = undefined;
    // The time the event is stamped with, read before the buffers are
    // written too (a patched `Date.now` may record); a number here, so that
    // handing it in runs no `valueOf` of the caller's.
    const now = +Date.now();
    const textLength = writeText(enc.parts, enc.payload);
    enc.payload = "";
    writeTape(enc.tape, enc.length);
    write(undefined, kind.length, enc.length, textLength, estimate, redact, rest, now);
    const event = readAnswer(kind, json);
    releaseLargeText();
    return event;
  } finally {
    enc.payload = "";
    if (enc.parts.length !== 0) enc.parts.length = 0;
    // A walk that threw leaves its place behind.
    if (enc.path.length !== 0) enc.path.length = 0;
    if (enc.ancestors.length !== 0) enc.ancestors.length = 0;
    enc.busy = false;
  }
}

Object.defineProperty(glue.Session.prototype, "record", {
  configurable: true,
  writable: true,
  /** Records an event and returns it. `data` must be JSON-compatible. */
  value: function record(kind, data, options) {
    return recordWith(kind, data, options, true, (k, units, tape, text, estimate, redact, rest, now) =>
      // Nothing for Rust to read (the kind a string, the options read
      // here): the entry that takes no JS values.
      units >= 0 && rest === undefined
        ? this.__recordRead(units, tape, text, estimate, redact, now)
        : this.__recordBuffered(k, units, tape, text, estimate, redact, rest));
  },
});

Object.defineProperty(glue.EventLog.prototype, "append", {
  configurable: true,
  writable: true,
  /** Appends an event and returns it. `data` must be JSON-compatible. */
  value: function append(kind, data, options) {
    return recordWith(kind, data, options, false, (k, units, tape, text, estimate, _redact, rest) => this.__appendBuffered(k, units, tape, text, estimate, rest));
  },
});
