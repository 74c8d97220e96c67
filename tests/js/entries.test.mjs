// The package's entries: the node entry is ready on import; the web entry
// throws NOT_INITIALIZED until init, then behaves the same.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as nodeEntry from "agent-context-compiler";
import * as glue from "../../pkg/context_compiler.js";
import * as busGlue from "../../pkg/context_compiler_bus.js";
import * as storesGlue from "../../pkg/context_compiler_stores.js";
import { EXPORTED_NAMES } from "./exported-names.mjs";

/** What the child script `name` (tests/js/children/) printed last, as JSON, after it exited cleanly. */
function childOutput(name) {
  const script = fileURLToPath(new URL(`./children/${name}.mjs`, import.meta.url));
  const r = spawnSync(process.execPath, [script], { encoding: "utf8", timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split("\n").pop());
}

/** The bytes of the package's module `name` (`pkg/<name>_bg.wasm`), as a string to search. */
const moduleText = (name) => readFileSync(new URL(`../../pkg/${name}_bg.wasm`, import.meta.url)).toString("latin1");

/** Asserts that each of `texts` is in the module `inside` and not in the main module. */
function onlyIn(inside, texts) {
  const main = moduleText("context_compiler");
  const other = moduleText(inside);
  for (const text of texts) {
    assert.ok(other.includes(text), `${text} in ${inside}`);
    assert.ok(!main.includes(text), `${text} not in the main module`);
  }
}

test("both entries export exactly the three glues' public names", async () => {
  // `__installHost` and `__runTasks` are the entries' own hooks (js/module-guard.js).
  // PersistentMemory is in both the main and the stores glue.
  const glueNames = [...new Set([...Object.keys(glue), ...Object.keys(busGlue), ...Object.keys(storesGlue)])]
    .filter((n) => n !== "default" && n !== "initSync" && !n.startsWith("__"))
    .sort();
  assert.deepEqual(glueNames, [...EXPORTED_NAMES].sort());
  const web = await import("agent-context-compiler/web");
  for (const n of EXPORTED_NAMES) {
    assert.equal(typeof nodeEntry[n], "function", n);
    assert.equal(typeof web[n], "function", n);
  }
});

test("the web entry throws NOT_INITIALIZED before init, then works", () => {
  // In a fresh process: here the node entry has already loaded the instance.
  const out = childOutput("web_entry_first");
  for (const e of out.before) {
    assert.ok(e !== null, "a use before init must throw");
    assert.equal(e.code, "NOT_INITIALIZED");
    assert.equal(e.name, "ContextCompilerError");
    assert.match(e.message, /init\(\)/);
  }
  // Bytes instead of { main }, no main module, an unknown module; then init's
  // string input, unknown module names, modules not an array, unknown wasm and
  // option keys: each INVALID_ARGUMENT.
  assert.deepEqual(out.refused, Array(8).fill("INVALID_ARGUMENT"));
  assert.equal(out.schemaBefore?.code, "NOT_INITIALIZED");
  assert.equal(out.schemaBefore.name, "ContextCompilerError");
  assert.match(out.schemaBefore.message, /SchemaRegistry is in the JSON Schema module.*init\(\{ modules: \["schemas"\] \}\)/);
  assert.deepEqual(out.schemaValid, [true, false]);
  assert.equal(out.busBefore?.code, "NOT_INITIALIZED");
  assert.equal(out.busBefore.name, "ContextCompilerError");
  assert.match(out.busBefore.message, /EventBus is in the event-bus module.*init\(\{ modules: \["bus"\] \}\)/);
  assert.deepEqual(out.busEmits, [true, 1]);
  assert.equal(out.storesBefore?.code, "NOT_INITIALIZED");
  assert.equal(out.storesBefore.name, "ContextCompilerError");
  assert.match(out.storesBefore.message, /KvArtifactStore is in the stores module.*init\(\{ modules: \["stores"\] \}\)/);
  assert.deepEqual(out.saved, { eventsWritten: 0, rewritten: true });
  assert.deepEqual(
    { instance: out.instance, sessionId: out.sessionId, tokens: out.tokens, compiled: out.compiled },
    { instance: true, sessionId: "w", tokens: 2, compiled: true },
  );
});

test("the node entry compiles the JSON Schema module only when the first SchemaRegistry is made", () => {
  const out = childOutput("schema_lazy");
  assert.deepEqual(out, {
    afterImport: ["context_compiler_bg.wasm"],
    afterTokens: ["context_compiler_bg.wasm"],
    afterRegistry: ["context_compiler_bg.wasm", "context_compiler_schema_bg.wasm"],
    afterSecond: ["context_compiler_bg.wasm", "context_compiler_schema_bg.wasm"],
    valid: [true, false],
  });
});

test("the node entry loads the stores module when the first persistent store is made, once", () => {
  const out = childOutput("stores_lazy");
  assert.deepEqual(out, {
    afterMemoryStore: ["context_compiler_bg.wasm"],
    afterStore: ["context_compiler_bg.wasm", "context_compiler_stores_bg.wasm"],
    afterSecond: ["context_compiler_bg.wasm", "context_compiler_stores_bg.wasm"],
    report: { eventsWritten: 1, rewritten: true },
    loaded: [true, true],
  });
});

test("the node entry loads the event-bus module when the first bus or handler is made, once", () => {
  const out = childOutput("bus_lazy");
  assert.deepEqual(out, {
    afterSession: ["context_compiler_bg.wasm"],
    afterBus: ["context_compiler_bg.wasm", "context_compiler_bus_bg.wasm"],
    afterHandlers: ["context_compiler_bg.wasm", "context_compiler_bus_bg.wasm"],
    fed: [["message_received", "lazy", "hi"], ["turn_completed", "lazy", "hello"]],
  });
});

test("the node entry loads node:crypto at its first hash, not on import", () => {
  const out = childOutput("crypto_lazy");
  assert.deepEqual(out, {
    before: false,
    afterImport: false,
    afterCompile: false,
    afterHash: true,
    // SHA-256 of "abc" (FIPS 180-2, appendix B.1).
    id: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  });
});

test("the main module holds no event-bus code; the bus module does", () => {
  // Messages only the bus and its handlers write.
  onlyIn("context_compiler_bus", ["options.maxQueue", "sessionIdleTimeoutMs"]);
});

test("the main module holds no persistent-store code; the stores module does", () => {
  // Messages only the KV, file, SQLite and IndexedDB stores write.
  onlyIn("context_compiler_stores", [
    "kv must be an object with async get, put and delete methods",
    "files must be an object with async read, write, remove and list methods",
    "connection must be an object with async query(sql, params) and batch(statements) methods",
    "options.durability must be",
  ]);
});

test("the main module holds no JSON Schema code; the schema module does", () => {
  // Messages only the jsonschema crate writes.
  onlyIn("context_compiler_schema", ["is not valid under any of the schemas listed", "is not a multiple of"]);
});

test("both entries share one instance: the web entry is ready once the node entry loaded it", async () => {
  const web = await import("agent-context-compiler/web");
  const s = new web.Session({ sessionId: "shared" });
  assert.ok(s instanceof nodeEntry.Session);
  assert.equal(web.countTokens("hello world"), nodeEntry.countTokens("hello world"));
});
