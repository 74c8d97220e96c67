// Run by entries.test.mjs in a fresh process: notes the WebAssembly modules
// the node entry reads as a session records, a bus is made and fed by the
// session, and the handlers are made. Prints what it saw.
import { noteWasmReads } from "./wasm_reads.mjs";

const read = noteWasmReads();

const lib = await import("agent-context-compiler");
const session = new lib.Session({ sessionId: "lazy" });
session.record("user_input", "before any bus");
const afterSession = [...read];
const bus = new lib.EventBus();
const afterBus = [...read];
const fed = [];
bus.on("message_received", (e) => fed.push([e.type, e.sessionId, e.data.text]));
bus.on("turn_completed", (e) => fed.push([e.type, e.sessionId, e.data.response]));
session.attachBus(bus);
session.record("user_input", "hi");
session.record("assistant_output", "hello");
bus.start();
await bus.stop();
new lib.SessionTimeoutMonitor({ bus });
new lib.EpisodeSummarizer({ bus, llm: async () => "summary" });
const afterHandlers = [...read];
console.log(JSON.stringify({ afterSession, afterBus, afterHandlers, fed }));
