// Run by hostile_host.test.mjs in a fresh process: imports one export five
// times and prints the wasm memory size after each, beside the document's.
import { Session } from "agent-context-compiler";
import { glue } from "../../../pkg/entry-internals.js";

// Already instantiated by the entry (the glue of the chunk the entries
// share, scripts/bundle.mjs): this returns its exports.
const { memory } = glue.initSync({ module: new Uint8Array() });
// The export is written in plain JS, so the instance is still cold.
const events = [];
for (let i = 0; i < 20000; i++) {
  const data = { text: `event number ${i} ${"lorem ipsum ".repeat(8)}` };
  events.push({ eventId: `e${i}`, timestamp: 1700000000000 + i, kind: i % 2 ? "user_input" : "assistant_output", data, tokenEstimate: 30 });
}
const json = JSON.stringify({ format: "agent-context-compiler/session", version: 1, sessionId: "cold", events });
const start = memory.buffer.byteLength;
const sizes = [];
for (let k = 0; k < 5; k++) {
  const s = Session.importJson(json);
  const log = s.eventLog;
  if (log.length !== 20000) throw new Error(`imported ${log.length} events`);
  log.free();
  s.free();
  sizes.push(memory.buffer.byteLength);
}
console.log(JSON.stringify({ documentBytes: json.length, start, sizes }));
