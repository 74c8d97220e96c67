// Run by entries.test.mjs in a fresh process: only the web entry is loaded,
// so the instance is not initialised until `initSync`. Prints what it saw.
import { readFileSync } from "node:fs";
import * as web from "agent-context-compiler/web";

const before = [];
for (const use of [() => new web.Session(), () => web.countTokens("x"), () => web.Session.importJson("{}")]) {
  try {
    use();
    before.push(null);
  } catch (e) {
    before.push({ name: e.name, code: e.code, message: e.message });
  }
}
web.initSync(readFileSync(new URL("../../../pkg/context_compiler_bg.wasm", import.meta.url)));
// JSON Schema validation is a second module with its own initialisation.
let schemaBefore = null;
try {
  new web.SchemaRegistry();
} catch (e) {
  schemaBefore = { name: e.name, code: e.code, message: e.message };
}
web.initSchemasSync(readFileSync(new URL("../../../pkg/context_compiler_schema_bg.wasm", import.meta.url)));
const registry = new web.SchemaRegistry();
registry.register("t", { type: "integer" });
// So is the event bus.
let busBefore = null;
try {
  new web.EventBus();
} catch (e) {
  busBefore = { name: e.name, code: e.code, message: e.message };
}
web.initBusSync(readFileSync(new URL("../../../pkg/context_compiler_bus_bg.wasm", import.meta.url)));
const bus = new web.EventBus();
const s = new web.Session({ sessionId: "w" });
// And the persistent stores.
const kv = new Map();
const kvLike = { get: async (k) => kv.get(k) ?? null, put: async (k, v) => void kv.set(k, v), delete: async (k) => void kv.delete(k) };
let storesBefore = null;
try {
  new web.KvArtifactStore(kvLike);
} catch (e) {
  storesBefore = { name: e.name, code: e.code, message: e.message };
}
web.initStoresSync(readFileSync(new URL("../../../pkg/context_compiler_stores_bg.wasm", import.meta.url)));
const saved = await new web.KvArtifactStore(kvLike).saveSession(s);
console.log(
  JSON.stringify({
    before,
    schemaBefore,
    schemaValid: [registry.validate("t", 3).valid, registry.validate("t", "3").valid],
    busBefore,
    busEmits: [bus.tryEmit({ type: "t", agentId: "a" }), bus.pending],
    storesBefore,
    saved,
    instance: s instanceof web.Session,
    sessionId: s.sessionId,
    tokens: web.countTokens("hello world"),
    compiled: await new web.ContextCompiler().compile(s, 100, { systemPrompt: "x" }).then((c) => c.toMessages().length > 0),
  }),
);
