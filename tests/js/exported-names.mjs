// The names both entries must export besides init/initSync.
// entries.test.mjs checks this list against the generated glue and both entries.
export const EXPORTED_NAMES = [
  "ArtifactAttacher",
  "Compactor",
  "ContextCompiler",
  "EventLog",
  "HistorySelector",
  "InMemoryBackend",
  "MemoryArtifactStore",
  "MemoryPreloader",
  "PerceptionAligner",
  "SchemaRegistry",
  "Session",
  "TokenBudget",
  "ToolEvent",
  "ToolInterruptHandler",
  "WorkingContext",
  "countTokens",
  "estimateTokens",
  "redact",
];
