// The exact tokenizers in Node: the module is read from the package.
// node:fs as an object (as ./node.js gets it): its ES module facade loads
// Node's streams.
import { makeLoaders } from "./tokenizers.js";

export { MESSAGE_OVERHEAD } from "./tokenizers.js";
export const { loadTokenizer, loadTokenizerSync } = makeLoaders((encoding) =>
  process.getBuiltinModule("node:fs").readFileSync(new URL(`../pkg/context_compiler_${encoding}_bg.wasm`, import.meta.url)),
);
