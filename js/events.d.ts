// The session events the library records, kind by kind (hand-written beside
// the generated `SessionEvent`, whose `data` is any JSON).
import type { Json } from "./types/Json.js";

/** What every event has besides its kind and data. */
interface EventBase {
  /** Time-sortable id. */
  eventId: string;
  /** Milliseconds since the Unix epoch. */
  timestamp: number;
  /** The token estimate of its rendered content. */
  tokenEstimate: number;
}

/** Reasoning kept with an assistant turn or its first call. */
export type EventReasoning = { format: string; items: Json[] };

/** The data of each kind the library records. */
export interface KnownEventData {
  user_input: { text?: string; content?: string; media?: Json[]; [key: string]: Json | undefined };
  assistant_output: { text?: string; content?: string; reasoning?: EventReasoning; partial?: boolean; [key: string]: Json | undefined };
  phase_result: { text?: string; content?: string; [key: string]: Json | undefined };
  tool_call: { tool_name: string; arguments: Json; call_id?: string; thought_signature?: string; reasoning?: EventReasoning; [key: string]: Json | undefined };
  /** `result` is the redacted output; an output stored in the artifact store has a `handle` and `summary` instead. */
  tool_success: { tool: string; call_id: string; result?: string; handle?: string; summary?: string; latency_ms?: number; valid?: boolean; [key: string]: Json | undefined };
  tool_error: { tool: string; call_id: string; error: string; latency_ms?: number; [key: string]: Json | undefined };
  tool_timeout: { tool: string; call_id: string; error: string; latency_ms?: number; timeout_ms?: number; [key: string]: Json | undefined };
  artifact_stored: { handle: string; source: string; size_bytes: number; summary: string; mime_type: string | null; event_id?: string; call_id?: string; [key: string]: Json | undefined };
  context_compacted: { level: "light" | "full" | "emergency"; summary: string | null; tokens_before: number; tokens_after: number; budget: number; summarizer_error?: string; [key: string]: Json | undefined };
  memory_hit: { key: string; content: string; category?: string; pinned?: boolean; [key: string]: Json | undefined };
  guard_decision: { allowed: boolean; threat_level: string; reason?: string; [key: string]: Json | undefined };
  model_usage: { inputTokens: number; cachedInputTokens: number; outputTokens: number; countedTokens?: number; [key: string]: Json | undefined };
}

/** A kind the library records. */
export type KnownEventKind = keyof KnownEventData;

/** An event of a kind the library records, with that kind's data. */
export type KnownSessionEvent = { [K in KnownEventKind]: EventBase & { kind: K; data: KnownEventData[K] } }[KnownEventKind];

/** An event of a kind of the host's own. */
export type CustomSessionEvent = EventBase & { kind: string; data: Json };

/** Whether `event` is an event of `kind` (anything else is `false`): narrows
 * its `data` to that kind's shape. A kind the library does not record is
 * `INVALID_ARGUMENT`. */
export function isEvent<K extends KnownEventKind>(event: unknown, kind: K): event is EventBase & { kind: K; data: KnownEventData[K] };
