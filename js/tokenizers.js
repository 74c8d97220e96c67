// Exact token counters: OpenAI's o200k_base and cl100k_base encodings, each
// in a wasm module of its own (crates/tokenizer-wasm), loaded only here, so
// no vocabulary is in the main module. A loaded tokenizer is a
// `tokenCounter` for Session, EventLog, ContextWindow and the stores'
// loadSession: budgets then hold in the provider's own tokens.
import initO200k, { initSync as initO200kSync, Tokenizer as O200k } from "../pkg/context_compiler_o200k_base.js";
import initCl100k, { initSync as initCl100kSync, Tokenizer as Cl100k } from "../pkg/context_compiler_cl100k_base.js";
import { codedError } from "./coded.js";

const ENCODINGS = {
  o200k_base: { init: initO200k, initSync: initO200kSync, Tokenizer: O200k },
  cl100k_base: { init: initCl100k, initSync: initCl100kSync, Tokenizer: Cl100k },
};

/**
 * Tokens OpenAI's chat format adds around each message: 3 for the markers
 * and 1 for the role, as OpenAI's cookbook counts them.
 */
export const MESSAGE_OVERHEAD = 4;

const loaded = new Map();

function spec(encoding) {
  const s = Object.hasOwn(ENCODINGS, encoding) ? ENCODINGS[encoding] : undefined;
  if (s === undefined) {
    throw codedError("INVALID_ARGUMENT", `unknown encoding ${JSON.stringify(encoding)}: use "o200k_base" or "cl100k_base"`);
  }
  return s;
}

/** The counter over a freshly loaded module. */
function counter(encoding, Tokenizer) {
  let tokenizer;
  try {
    tokenizer = new Tokenizer();
  } catch (e) {
    throw codedError("INTERNAL_PANIC", `the ${encoding} tokenizer did not load: ${e?.message ?? e}`, e);
  }
  const made = Object.freeze({
    encoding,
    messageOverhead: MESSAGE_OVERHEAD,
    /** The exact number of tokens `text` encodes to. */
    count(text) {
      if (typeof text !== "string") throw codedError("INVALID_ARGUMENT", `count expects a string (got ${typeof text})`);
      return tokenizer.count(text);
    },
  });
  loaded.set(encoding, made);
  return made;
}

/**
 * Loads `encoding` (`"o200k_base"` or `"cl100k_base"`). `input` is what the
 * wasm-bindgen loader takes (a URL, a `Response`, bytes or a
 * `WebAssembly.Module`); `source(encoding)` gives the default.
 */
export function makeLoaders(source) {
  async function loadTokenizer(encoding, input) {
    const s = spec(encoding);
    if (loaded.has(encoding)) return loaded.get(encoding);
    const from = input ?? source(encoding);
    await s.init(from === undefined ? undefined : { module_or_path: from });
    return loaded.get(encoding) ?? counter(encoding, s.Tokenizer);
  }

  function loadTokenizerSync(encoding, input) {
    const s = spec(encoding);
    if (loaded.has(encoding)) return loaded.get(encoding);
    const from = input ?? source(encoding);
    if (from === undefined) {
      throw codedError(
        "NOT_INITIALIZED",
        `loadTokenizerSync needs the ${encoding} module here (bytes or a WebAssembly.Module, e.g. from "agent-context-compiler/tokenizers/${encoding}.wasm"); or await loadTokenizer("${encoding}")`,
      );
    }
    s.initSync({ module: from });
    return counter(encoding, s.Tokenizer);
  }

  return { loadTokenizer, loadTokenizerSync };
}
