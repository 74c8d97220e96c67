// agent-context-compiler/openai-agents: what the OpenAI Agents SDK needs
// from this package (`@openai/agents` is an optional peer dependency).
import type { AgentInputItem, CallModelInputFilter, Session as AgentsSdkSession } from "@openai/agents";
import type { IntegrationOptions } from "./integration.js";

/** What the integration calls on a session (a `Session` of this package). */
export interface AgentsSessionSource {
  readonly sessionId: string;
  record(kind: string, data: unknown, options?: object): unknown;
  recordUsage(usage: object, options?: { countedTokens?: number }): unknown;
  sync(store: never, options?: object): Promise<unknown>;
  readonly eventLog: { readonly events: ReadonlyArray<{ eventId: string; kind: string; data: any }>; readonly length: number };
}

/** Options of `agentsSession`: the session, the compiler and budget of
 * every model call, the store synced after every write, and the compile's
 * own options. */
export interface AgentsSessionOptions extends IntegrationOptions<{ tokenCount: number; toMessages(options: { format: "openai-responses" }): unknown; free(): void }> {
  session: AgentsSessionSource;
  /** Called with each compiled context before its input goes to the model
   * (its `ledger`, `cache`, `zoneUsage`, ...); it is freed after the call
   * settles. What it throws fails the model call. */
  onCompile?: (context: any) => void | Promise<void>;
}

/**
 * The Agents SDK's `Session` over this package's session, and the
 * `callModelInputFilter` that compiles every model input from it:
 * `run(agent, input, { session, callModelInputFilter })`. `popItem` and
 * `clearSession` reject with `INVALID_ARGUMENT` (sessions are append-only).
 * Throws `INVALID_ARGUMENT` for an unknown option.
 */
export function agentsSession(options: AgentsSessionOptions): { session: AgentsSdkSession; callModelInputFilter: CallModelInputFilter };

/** A compiled context's `input` (the Responses API's wire items) as Agents SDK input items. */
export function toAgentInputItems(input: ReadonlyArray<unknown>): AgentInputItem[];
