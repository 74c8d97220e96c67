// Run by tokenizers.test.mjs in a fresh process: which WebAssembly modules
// are read as the package is used without, then with, the exact tokenizers.
import { noteWasmReads } from "./wasm_reads.mjs";

const read = noteWasmReads();

const lib = await import("agent-context-compiler");
const s = new lib.Session();
s.record("user_input", "hello");
const withoutTokenizers = [...read];
const { loadTokenizer } = await import("agent-context-compiler/tokenizers");
const afterImport = [...read];
const o200k = await loadTokenizer("o200k_base");
await loadTokenizer("o200k_base");
new lib.Session({ tokenCounter: o200k }).record("user_input", "hello");
console.log(JSON.stringify({ withoutTokenizers, afterImport, afterLoad: [...read] }));
