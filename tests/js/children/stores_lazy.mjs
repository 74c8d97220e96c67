// Run by entries.test.mjs in a fresh process: notes the WebAssembly modules
// the node entry reads as a session records into an in-memory store, a KV
// store is made, saves the session and loads it back, and a second store is
// made. Prints what it saw.
import { noteWasmReads } from "./wasm_reads.mjs";

const read = noteWasmReads();

const lib = await import("agent-context-compiler");
const session = new lib.Session({ sessionId: "lazy" });
session.record("user_input", "before any persistent store");
await new lib.MemoryArtifactStore().saveSession(session);
const afterMemoryStore = [...read];
const map = new Map();
const kv = {
  get: async (k) => map.get(k) ?? null,
  put: async (k, v) => void map.set(k, v),
  delete: async (k) => void map.delete(k),
  list: async ({ prefix }) => [...map.keys()].filter((k) => k.startsWith(prefix)),
};
const store = new lib.KvArtifactStore(kv);
const afterStore = [...read];
const report = await store.saveSession(session);
const loaded = await store.loadSession("lazy");
new lib.KvArtifactStore(kv);
const afterSecond = [...read];
console.log(
  JSON.stringify({
    afterMemoryStore,
    afterStore,
    afterSecond,
    report,
    loaded: [loaded instanceof lib.Session, loaded.exportJson() === session.exportJson()],
  }),
);
