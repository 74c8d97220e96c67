// Run by entries.test.mjs in a fresh process: counts the WebAssembly modules
// compiled (by the file they were read from) as the node entry loads, counts
// tokens, and makes two SchemaRegistry objects. Prints what it saw.
import { noteWasmReads } from "./wasm_reads.mjs";

const compiled = noteWasmReads();

const lib = await import("agent-context-compiler");
const afterImport = [...compiled];
lib.countTokens("hello");
const afterTokens = [...compiled];
const registry = new lib.SchemaRegistry();
registry.register("t", { type: "integer" });
const afterRegistry = [...compiled];
new lib.SchemaRegistry();
console.log(
  JSON.stringify({
    afterImport,
    afterTokens,
    afterRegistry,
    afterSecond: [...compiled],
    valid: [registry.validate("t", 3).valid, registry.validate("t", "3").valid],
  }),
);
