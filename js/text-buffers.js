// The two buffers in wasm memory (crates/npm-wasm/src/record_buffers.rs) that
// `record` / `append` (./record.js) and `countTokens` (./api.js) write their
// input into, and that Rust answers a record in: a tape of numbers and UTF-8
// text. Writing straight into wasm memory spares what passing arguments
// costs: an allocation and a copy each, wasm-bindgen's character loop over
// strings, and a string back.
import * as glue from "../pkg/context_compiler.js";

/**
 * Where each buffer starts and how long it is, and views of them over the
 * memory they were made in (made again when a buffer moves, and when the
 * memory grows: that detaches them).
 */
const buffers = { memory: null, tapeAt: 0, tapeLength: 0, textAt: 0, textLength: 0, tape: null, text: null };
/** The fewest numbers and bytes asked for (an answer takes 3 and an id). */
const MIN_TAPE = 1024;
const MIN_TEXT = 4096;
/** A text buffer larger than this is let go after the call that needed it. */
const KEEP_TEXT = 1 << 20;
const encoder = new TextEncoder();

function sizeTape(n) {
  buffers.tapeLength = Math.max(n, MIN_TAPE);
  buffers.tapeAt = glue.__recordTapeBuffer(buffers.tapeLength);
  buffers.text = null;
}

function sizeText(n) {
  buffers.textLength = Math.max(n, MIN_TEXT);
  buffers.textAt = glue.__recordTextBuffer(buffers.textLength);
  buffers.text = null;
}

/**
 * Views of the buffers over the memory as it is now. Growing the memory
 * detaches the views made before (their length becomes 0), which is
 * cheaper to look at than the memory's `buffer`.
 */
function views() {
  if (buffers.text !== null && buffers.text.length !== 0) return;
  if (buffers.memory === null) buffers.memory = glue.__memory();
  const buffer = buffers.memory.buffer;
  buffers.tape = new Float64Array(buffer, buffers.tapeAt, buffers.tapeLength);
  buffers.text = new Uint8Array(buffer, buffers.textAt, buffers.textLength);
}

/**
 * Writes `parts` then `last`, joined, as UTF-8 into the text buffer,
 * growing it as needed; returns the bytes written.
 */
export function writeText(parts, last) {
  let units = last.length;
  for (let i = 0; i < parts.length; i++) units += parts[i].length;
  if (buffers.textLength === 0 || units > buffers.textLength) sizeText(units);
  let written = 0;
  for (let i = 0; i <= parts.length; i++) {
    let source = i === parts.length ? last : parts[i];
    // Nothing to write (the payload after a long string that ends the
    // data): no call to encodeInto, which costs one whatever the length.
    if (source.length === 0) continue;
    for (;;) {
      views();
      const done = encoder.encodeInto(source, written === 0 ? buffers.text : buffers.text.subarray(written));
      written += done.written;
      units -= done.read;
      if (done.read === source.length) break;
      // Room for the rest at 3 bytes a UTF-16 unit (each takes at most that).
      source = source.slice(done.read);
      sizeText(written + units * 3);
    }
  }
  return written;
}

/** Writes the first `length` numbers of `tape` into the tape buffer (a short tape without a subarray). */
export function writeTape(tape, length) {
  if (length > buffers.tapeLength) sizeTape(length);
  views();
  const target = buffers.tape;
  if (length > 64) {
    target.set(tape.subarray(0, length));
    return;
  }
  for (let i = 0; i < length; i++) target[i] = tape[i];
}

/** The character codes of the last id read (an array, which `fromCharCode` reads fastest). */
const idCodes = [];

/**
 * The event Rust answered a record with: the id at the start of the text
 * buffer, the timestamp, the estimate and the id's length at the start of
 * the tape buffer; `kind` and `data` as the caller has them.
 */
export function readAnswer(kind, data) {
  views();
  const answer = buffers.tape;
  const text = buffers.text;
  const length = answer[2];
  if (idCodes.length !== length) idCodes.length = length;
  for (let i = 0; i < length; i++) idCodes[i] = text[i];
  return {
    eventId: String.fromCharCode.apply(null, idCodes),
    timestamp: answer[0],
    kind,
    // Recording redacted a tool event's secrets: the data walked still
    // holds them, the recorded data does not.
    data: answer[3] === 1 ? glue.__takeRedactedData() : data,
    tokenEstimate: answer[1],
  };
}

/**
 * Lets a text buffer larger than `KEEP_TEXT` go (the next write sizes a new
 * one). Only after a call that returned: after a trap, nothing more may
 * call into the instance.
 */
export function releaseLargeText() {
  if (buffers.textLength <= KEEP_TEXT) return;
  glue.__recordTextBuffer(0);
  buffers.textLength = 0;
  buffers.text = null;
}
