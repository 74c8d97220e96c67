// Constants both entries export (plain JS values; the wasm exports classes and functions).

/** The seed's ToolEventKind: the session event kinds of tool interactions. */
export const ToolEventKind = Object.freeze({
  CALL: "tool_call",
  SUCCESS: "tool_success",
  ERROR: "tool_error",
  TIMEOUT: "tool_timeout",
});
