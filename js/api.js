// The package's API, the same in both entries: the main glue's classes and
// functions, each guarded by ./instance.js, the event-bus module's classes,
// guarded by ./bus.js, and the stores module's, guarded by ./stores.js.
import * as glue from "../pkg/context_compiler.js";
import { guardClass, guarded } from "./instance.js";
export { EpisodeSummarizer, EventBus, FactExtractor, SessionTimeoutMonitor, SleepHandler } from "./bus.js";
export { FsArtifactStore, IndexedDbArtifactStore, KvArtifactStore, PostgresArtifactStore, SqliteArtifactStore } from "./stores.js";
// Defines Session.record and EventLog.append, and WorkingContext.ledger,
// before the classes are guarded.
import "./record.js";
import "./ledger.js";
import { releaseLargeText, writeText } from "./text-buffers.js";

/** No text before the string `countTokens` writes. */
const NO_PARTS = [];

export const ArtifactAttacher = guardClass(glue.ArtifactAttacher);
export const Compactor = guardClass(glue.Compactor);
export const ContextCompiler = guardClass(glue.ContextCompiler);
export const ContextWindow = guardClass(glue.ContextWindow);
export const EventLog = guardClass(glue.EventLog);
export const HistorySelector = guardClass(glue.HistorySelector);
export const HistoryRecall = guardClass(glue.HistoryRecall);
export const InMemoryBackend = guardClass(glue.InMemoryBackend);
export const MemoryArtifactStore = guardClass(glue.MemoryArtifactStore);
export const MemoryPreloader = guardClass(glue.MemoryPreloader);
export const PerceptionAligner = guardClass(glue.PerceptionAligner);
export const PersistentMemory = guardClass(glue.PersistentMemory);
export const SchemaRegistry = guardClass(glue.SchemaRegistry);
export const Session = guardClass(glue.Session);
export const TokenBudget = guardClass(glue.TokenBudget);
export const ToolEvent = guardClass(glue.ToolEvent);
export const ToolInterruptHandler = guardClass(glue.ToolInterruptHandler);
export const WorkingContext = guardClass(glue.WorkingContext);
export const attachMedia = guarded(glue.attachMedia, "attachMedia", { needsReady: true });
export const checkRequest = guarded(glue.checkRequest, "checkRequest", { needsReady: true });
export const contentId = guarded(glue.contentId, "contentId", { needsReady: true });
export const countTokens = guarded(
  function countTokens(text) {
    // A string goes in through the text buffer; anything else to Rust,
    // which says what is wrong with it.
    if (typeof text !== "string") return glue.countTokens(text);
    const count = glue.__countTokensBuffered(writeText(NO_PARTS, text));
    releaseLargeText();
    return count;
  },
  "countTokens",
  { needsReady: true },
);
export const estimateTokens = guarded(glue.estimateTokens, "estimateTokens", { needsReady: true });
export const lookBackToolDefinitions = guarded(glue.lookBackToolDefinitions, "lookBackToolDefinitions", { needsReady: true });
export const orchestrateCompiled = guarded(glue.orchestrateCompiled, "orchestrateCompiled", { needsReady: true });
export const orchestrateCompiledTool = guarded(glue.orchestrateCompiledTool, "orchestrateCompiledTool", { needsReady: true });
export const redact = guarded(glue.redact, "redact", { needsReady: true });
export const runCompiled = guarded(glue.runCompiled, "runCompiled", { needsReady: true });
