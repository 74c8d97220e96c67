/** The seed's ToolEventKind: the session event kinds of tool interactions. */
export declare const ToolEventKind: Readonly<{
  CALL: "tool_call";
  SUCCESS: "tool_success";
  ERROR: "tool_error";
  TIMEOUT: "tool_timeout";
}>;
