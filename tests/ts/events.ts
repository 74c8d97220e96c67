// isEvent narrows a SessionEvent to its kind's data under --strict.
import { Session, isEvent, type CustomSessionEvent, type KnownSessionEvent } from "agent-context-compiler";

export function read(session: Session): string[] {
  const out: string[] = [];
  for (const e of session.eventLog.events) {
    if (isEvent(e, "tool_success")) out.push(`${e.data.tool} ${e.data.call_id}: ${e.data.result}`);
    else if (isEvent(e, "tool_call")) out.push(`${e.data.tool_name}(${JSON.stringify(e.data.arguments)})`);
    else if (isEvent(e, "model_usage")) out.push(String(e.data.inputTokens + e.data.outputTokens));
    else if (isEvent(e, "context_compacted")) out.push(e.data.level);
    // @ts-expect-error a kind the library does not record is no KnownEventKind
    else if (isEvent(e, "tool_sucess")) out.push("never");
  }
  const known: KnownSessionEvent[] = [];
  const custom: CustomSessionEvent = { eventId: "e", timestamp: 0, tokenEstimate: 0, kind: "deploy", data: { ok: true } };
  // @ts-expect-error a tool_error's data has an error, not a result
  const wrong: KnownSessionEvent = { eventId: "e", timestamp: 0, tokenEstimate: 0, kind: "tool_error", data: { tool: "t", call_id: "c", result: "x" } };
  return [...out, String(known.length), custom.kind, wrong.kind];
}
