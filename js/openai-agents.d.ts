// agent-context-compiler/openai-agents: what the OpenAI Agents SDK needs
// from this package (`@openai/agents` is an optional peer dependency).
import type { AgentInputItem, CallModelInputFilter, FunctionTool, RunState, Session as AgentsSdkSession } from "@openai/agents";
import type { WorkingContext } from "../pkg/types/context_compiler.js";
import type { ApprovalEvent, ApprovalSession, IntegrationOptions, LookBackSession, LookBackToolOptions } from "./integration.js";

export type { LookBackSession, LookBackToolOptions } from "./integration.js";

/** What the integration calls on a session (a `Session` of this package). */
export interface AgentsSessionSource extends LookBackSession, ApprovalSession {
  readonly sessionId: string;
  record(kind: string, data: unknown, options?: object): unknown;
  recordUsage(usage: object, options?: { countedTokens?: number }): unknown;
  sync(store: never, options?: object): Promise<unknown>;
  readonly eventLog: { readonly events: ReadonlyArray<{ eventId: string; kind: string; data: any }>; readonly length: number };
}

/** Options of `agentsSession`: the session, the compiler and budget of
 * every model call, the store synced after every write, the look-back
 * tools, and the compile's own options. */
export interface AgentsSessionOptions extends IntegrationOptions<WorkingContext>, LookBackToolOptions {
  session: AgentsSessionSource;
  /** Called with each compiled context before its input goes to the model
   * (its `ledger`, `cache`, `zoneUsage`, ...); it is freed after the call
   * settles. What it throws fails the model call. */
  onCompile?: (context: WorkingContext) => void | Promise<void>;
}

/** What `agentsSession` gives: the SDK's `Session`, the filter and the look-back tools. */
export interface AgentsSession {
  /** The Agents SDK's `Session` over this package's session: `run(agent, input, { session })`. */
  session: AgentsSdkSession;
  /** Compiles every model input: `run(agent, input, { callModelInputFilter })`. */
  callModelInputFilter: CallModelInputFilter;
  /** The look-back tools (`search_history`, `read_artifact`) over the
   * session, for the agent: `new Agent({ tools: [...yours, ...tools] })`;
   * `[]` with `lookBackTools: false`. */
  tools: FunctionTool<unknown, any, string>[];
  /** Records what a run that stopped for approvals holds (a `RunResult`,
   * or its `RunState`): each interrupted call's `approval_requested`, once,
   * and the decisions `state.approve` / `state.reject` made on them since (a
   * rejection with its message); with `store`, synced. Returns the events
   * recorded. The decisions are also recorded when the resumed run
   * persists the calls' results. */
  recordApprovals(resultOrState: RunState<any, any> | { readonly state: RunState<any, any> }): Promise<ApprovalEvent[]>;
}

/**
 * The Agents SDK's `Session` over this package's session (with `store`,
 * synced after every write), the `callModelInputFilter` that compiles every
 * model input from it (counting the tools the SDK sends with it), and the
 * look-back `tools` for the agent:
 * `new Agent({ tools: [...yours, ...tools] })`,
 * `run(agent, input, { session, callModelInputFilter })`. `popItem` and
 * `clearSession` reject with `INVALID_ARGUMENT` (sessions are append-only).
 * Throws `INVALID_ARGUMENT` for an unknown option.
 */
export function agentsSession(options: AgentsSessionOptions): AgentsSession;

/** A compiled context's `input` (the Responses API's wire items) as Agents SDK input items. */
export function toAgentInputItems(input: ReadonlyArray<unknown>): AgentInputItem[];
