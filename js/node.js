// Node entry: loads the wasm synchronously from the package, ready on import.
import { readFileSync } from "node:fs";
import { initSync as initGlue } from "../pkg/context_compiler.js";

initGlue({ module: readFileSync(new URL("../pkg/context_compiler_bg.wasm", import.meta.url)) });

export {
  ArtifactAttacher,
  Compactor,
  ContextCompiler,
  ContextWindow,
  EventLog,
  HistorySelector,
  InMemoryBackend,
  IndexedDbArtifactStore,
  KvArtifactStore,
  MemoryArtifactStore,
  MemoryPreloader,
  PerceptionAligner,
  SchemaRegistry,
  Session,
  TokenBudget,
  ToolEvent,
  ToolInterruptHandler,
  WorkingContext,
  contentId,
  countTokens,
  estimateTokens,
  redact,
} from "../pkg/context_compiler.js";

export * from "./constants.js";

/** Already initialised in Node; kept so code written for the web entry runs unchanged. */
export async function init() {}
/** Already initialised in Node; kept so code written for the web entry runs unchanged. */
export function initSync() {}
