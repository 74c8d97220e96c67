// Telling a session event's kind apart in JS and TypeScript: `isEvent(e,
// kind)` narrows a `SessionEvent` to that kind's known data (see
// ./events.d.ts for the shapes the library records).
import { codedError } from "./coded.js";

/** The kinds the library records (`KnownEventKind`). */
const KNOWN_KINDS = new Set([
  "user_input", "assistant_output", "phase_result", "tool_call", "tool_success", "tool_error", "tool_timeout",
  "artifact_stored", "context_compacted", "memory_hit", "guard_decision", "model_usage",
]);

/**
 * Whether `event` is a session event of `kind` (its `data` then has that
 * kind's shape); anything that is not such an event is `false`. A `kind` the
 * library does not record is `INVALID_ARGUMENT` (compare `e.kind` for your own).
 */
export function isEvent(event, kind) {
  if (!KNOWN_KINDS.has(kind)) {
    throw codedError("INVALID_ARGUMENT", `isEvent: ${typeof kind === "string" ? `${kind} is not a kind the library records` : "kind must be a string"} (compare e.kind for a kind of your own)`);
  }
  return event !== null && typeof event === "object" && event.kind === kind && typeof event.data === "object" && event.data !== null;
}
