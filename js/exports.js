// The names the package exports besides init/initSync, shared by both entries.
// tests/js/entries.test.mjs checks this list against the generated glue.
export const EXPORTED_NAMES = [
  "ArtifactAttacher",
  "Compactor",
  "ContextCompiler",
  "EventLog",
  "HistorySelector",
  "InMemoryBackend",
  "MemoryArtifactStore",
  "MemoryPreloader",
  "Session",
  "TokenBudget",
  "WorkingContext",
  "countTokens",
  "estimateTokens",
];
