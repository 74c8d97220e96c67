// The exact tokenizers in browsers, Deno and workerd: by default the module
// is fetched from beside its glue; pass bytes, a URL or a WebAssembly.Module
// instead (workerd: import "agent-context-compiler/tokenizers/o200k_base.wasm").
import { makeLoaders } from "./tokenizers.js";

export { MESSAGE_OVERHEAD } from "./tokenizers.js";
export const { loadTokenizer, loadTokenizerSync } = makeLoaders(() => undefined);
