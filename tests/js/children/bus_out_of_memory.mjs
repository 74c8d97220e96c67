// Run by hostile_host.test.mjs with --wasm-max-mem-pages (a small limit on
// each wasm memory): runs the event-bus module out of memory with events
// queued on a bus that is not started, then reports what later uses of the bus module
// and of the main module did. The process must live on and exit 0.
import { countTokens, EventBus, Session, SessionTimeoutMonitor } from "agent-context-compiler";
import { outcome, settled } from "./outcomes.mjs";


const session = new Session({ sessionId: "fed" });
const bus = new EventBus({ maxQueue: 1_000_000 });
session.attachBus(bus);
// A promise pending in the bus module when it stops: emit settles from a
// task, which has not run when the synchronous emits below fail.
const pendingEmit = settled(bus.emit({ type: "first", agentId: "a" }));

let failure;
const chunk = "x".repeat(16 * 1024 * 1024);
for (let i = 0; i < 64 && failure === undefined; i++) {
  const r = outcome(() => bus.tryEmit({ type: "big", agentId: "a", data: { i, chunk } }));
  if (!r.ok) failure = r;
}

const after = {
  busEmit: outcome(() => bus.tryEmit({ type: "small", agentId: "a" })),
  busGetter: outcome(() => bus.pending),
  newBus: outcome(() => new EventBus()),
  newMonitor: outcome(() => new SessionTimeoutMonitor({ bus })),
  busFree: outcome(() => bus.free()),
  // The main module goes on, and a session fed to the dead bus still records.
  record: outcome(() => session.record("user_input", "still here").eventId.length > 0),
  count: outcome(() => countTokens("hello world")),
  newSession: outcome(() => new Session({ sessionId: "new" }).sessionId),
};
console.log(JSON.stringify({ failure, after, pendingEmit: await pendingEmit }));
