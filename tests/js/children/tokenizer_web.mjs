// Run by tokenizers.test.mjs in a fresh process: the web build of the
// tokenizers loads synchronously only from the module it is given.
import { readFileSync } from "node:fs";
import * as web from "../../../js/tokenizers-web.js";

let before;
try {
  web.loadTokenizerSync("cl100k_base");
} catch (e) {
  before = { code: e.code, message: e.message };
}
const bytes = readFileSync(new URL("../../../pkg/context_compiler_cl100k_base_bg.wasm", import.meta.url));
const module = new WebAssembly.Module(bytes);
console.log(JSON.stringify({ before, count: web.loadTokenizerSync("cl100k_base", module).count("hello world") }));
