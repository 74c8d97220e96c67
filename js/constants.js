// Constants both entries export (plain JS values; the wasm exports classes and functions).

/** The kinds of tool events: the session event kinds of tool interactions. */
export const ToolEventKind = Object.freeze({
  CALL: "tool_call",
  SUCCESS: "tool_success",
  ERROR: "tool_error",
  TIMEOUT: "tool_timeout",
});

/** The share of the context window per zone. */
export const DEFAULT_ZONE_BUDGETS = Object.freeze({
  system: 0.12,
  persistent: 0.08,
  working: 0.4,
  recent: 0.4,
});
/** Utilisation from which light compaction is needed. */
export const COMPACT_LIGHT = 0.8;
/** Utilisation from which full compaction is needed. */
export const COMPACT_FULL = 0.9;
/** Utilisation from which emergency compaction is needed. */
export const COMPACT_EMERGENCY = 0.95;
