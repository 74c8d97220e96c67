// Telling a session event's kind apart in JS and TypeScript: `isEvent(e,
// kind)` narrows a `SessionEvent` to that kind's known data (see
// ./events.d.ts for the shapes the library records).

/** Whether `event` is a session event of `kind` (its `data` then has that kind's shape). */
export function isEvent(event, kind) {
  return event !== null && typeof event === "object" && event.kind === kind && typeof event.data === "object" && event.data !== null;
}
