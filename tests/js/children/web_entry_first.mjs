// Run by entries.test.mjs in a fresh process: only the web entry is loaded,
// so the instance is not initialised until `initSync`, which loads the main
// module and then each optional module it is given. Prints what it saw.
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
const wasm = (name) => readFileSync(new URL(`../../../pkg/${name}_bg.wasm`, import.meta.url));
// Options init and initSync refuse.
const refused = [];
for (const call of [
  () => web.initSync(wasm("context_compiler")),
  () => web.initSync({ bus: wasm("context_compiler_bus") }),
  () => web.initSync({ main: wasm("context_compiler"), tokenizer: new Uint8Array() }),
]) {
  try {
    call();
    refused.push(null);
  } catch (e) {
    refused.push(e.code);
  }
}
for (const options of ["https://example.com/x.wasm", { modules: ["bus", "tokenizer"] }, { modules: "bus" }, { wasm: { other: "x" } }, { module: [] }]) {
  refused.push(await web.init(options).then(() => null, (e) => e.code));
}
// The main module alone: the optional ones are left out.
web.initSync({ main: wasm("context_compiler") });
// JSON Schema validation is a module of its own.
let schemaBefore = null;
try {
  new web.SchemaRegistry();
} catch (e) {
  schemaBefore = { name: e.name, code: e.code, message: e.message };
}
web.initSync({ schemas: wasm("context_compiler_schema") });
const registry = new web.SchemaRegistry();
registry.register("t", { type: "integer" });
// So is the event bus.
let busBefore = null;
try {
  new web.EventBus();
} catch (e) {
  busBefore = { name: e.name, code: e.code, message: e.message };
}
web.initSync({ bus: wasm("context_compiler_bus") });
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
web.initSync({ stores: wasm("context_compiler_stores") });
const saved = await new web.KvArtifactStore(kvLike).saveSession(s);
console.log(
  JSON.stringify({
    before,
    refused,
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
