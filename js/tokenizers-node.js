// The exact tokenizers in Node: the module is read from the package.
import { readFileSync } from "node:fs";
import { makeLoaders } from "./tokenizers.js";

export { MESSAGE_OVERHEAD } from "./tokenizers.js";
export const { loadTokenizer, loadTokenizerSync } = makeLoaders((encoding) =>
  readFileSync(new URL(`../pkg/context_compiler_${encoding}_bg.wasm`, import.meta.url)),
);
