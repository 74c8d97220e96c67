// Run by hostile_host.test.mjs in a fresh process: records 60,000 events of
// 200-1,200 characters and prints how many times the wasm memory grew, and
// its size before and after.
import { Session } from "agent-context-compiler";
import { glue } from "../../../pkg/entry-internals.js";

// Already instantiated by the entry (the glue of the chunk the entries
// share, scripts/bundle.mjs): this returns its exports.
const { memory } = glue.initSync({ module: new Uint8Array() });
const start = memory.buffer.byteLength;
const s = new Session({ sessionId: "grow" });
let size = start;
let growths = 0;
for (let i = 0; i < 60000; i++) {
  s.record(i % 2 ? "assistant_output" : "user_input", { content: `turn ${i} ${"ordinary words of a long conversation ".repeat(5 + (i % 30))}` });
  if (memory.buffer.byteLength !== size) {
    size = memory.buffer.byteLength;
    growths++;
  }
}
s.free();
console.log(JSON.stringify({ start, end: size, growths }));
