// Types of "agent-context-compiler/tokenizers".
import type { ModuleInput, SyncModuleInput } from "./host-types.js";

/** The exact encodings this package ships. */
export type Encoding = "o200k_base" | "cl100k_base";

/** What a module can be loaded from. */
export type TokenizerInput = ModuleInput;

/** An exact token counter: pass it as `tokenCounter`. */
export interface Tokenizer {
  readonly encoding: Encoding;
  /** Tokens OpenAI's chat format adds around each message (4: markers and role). */
  readonly messageOverhead: number;
  /** The exact number of tokens `text` encodes to. */
  count(text: string): number;
}

/** Tokens OpenAI's chat format adds around each message. */
export declare const MESSAGE_OVERHEAD: number;

/**
 * Loads an encoding's module (once) and returns its counter. In Node it is
 * read from the package; elsewhere fetched from beside the glue unless
 * `input` says where.
 */
export declare function loadTokenizer(encoding: Encoding, input?: TokenizerInput): Promise<Tokenizer>;

/** Loads synchronously: in Node from the package, elsewhere from `input` (bytes or a module). */
export declare function loadTokenizerSync(encoding: Encoding, input?: SyncModuleInput): Tokenizer;
