// agent-context-compiler/langchain: middleware for LangChain's createAgent
// (`langchain` 1.x is an optional peer dependency).
import type { AgentMiddleware } from "langchain";
import type { BaseMessage, SystemMessage } from "@langchain/core/messages";
import type { AnthropicMessage, AnthropicTextBlock, CacheReport, Ledger } from "../pkg/types/context_compiler.js";
import type { ApprovalEvent, ApprovalSession, IntegrationOptions, LookBackSession, LookBackToolOptions, ThreadSession } from "./integration.js";

export { compileMetadata } from "./integration.js";
export type { CompileMetadata, CompileMetadataSource, LookBackSession, LookBackToolOptions, ThreadSession } from "./integration.js";

/** What the middleware calls on a session (a `Session` of this package). */
export interface LangChainSession extends LookBackSession, ApprovalSession {
  record(kind: string, data: unknown, options?: object): { data: any };
  recordUsage(usage: object): unknown;
  sync(store: never, options?: object): Promise<unknown>;
  readonly eventLog: { readonly events: ReadonlyArray<{ kind: string; data: any }> };
}

/** What the middleware reads of a compiled context (a `WorkingContext`). */
export interface LangChainContext {
  toMessages(options: { format: "openai" | "anthropic" }): unknown;
  /** Handed over as the reply's `response_metadata.agentContextCompiler.ledger`. */
  readonly ledger: Ledger;
  /** Handed over as the reply's `response_metadata.agentContextCompiler.cache`. */
  readonly cache: CacheReport | null;
  free(): void;
}

/** Options of `contextMiddleware`: the session (or one per thread), the
 * compiler and budget of every model call, the look-back tools, and the
 * compile's own options. */
export interface LangChainContextOptions extends IntegrationOptions<LangChainContext>, LookBackToolOptions {
  /** The session, or a function giving the session of a thread
   * (`runtime.configurable.thread_id`): when it gives `undefined` or
   * `null`, the session `store` saved under the thread's id is used. */
  session: LangChainSession | ((threadId: string) => ThreadSession<LangChainSession>);
}

/**
 * Middleware for `createAgent` (langchain 1.x): each model call gets the
 * compiled `messages` and `systemMessage` (the checkpointed thread is left
 * as it is; a `ChatAnthropic` model gets them in the `anthropic` format, its
 * signed thinking sent back, other models in the `openai` one), what the
 * state holds is recorded once (by message id), the reply is recorded with
 * its text, reasoning, calls and usage, and `wrapToolCall` records each tool result
 * and returns it redacted (a `Command`'s tool messages too). With `store`,
 * the session is synced to it after every step. Each reply's
 * `response_metadata.agentContextCompiler` is its compile's
 * `{ ledger, cache }` (read it with `compileMetadata`). The look-back tools
 * (`search_history`, `read_artifact` over `artifactStore`) are declared for
 * the agent unless `lookBackTools: false`. Throws `INVALID_ARGUMENT` for an
 * unknown option.
 */
export function contextMiddleware(options: LangChainContextOptions): AgentMiddleware;

/** Compiled messages in the `openai` format as LangChain messages: the
 * leading system messages as one `SystemMessage`, the rest in order. */
export function toLangChainMessages(compiled: ReadonlyArray<unknown>): { systemMessage: SystemMessage; messages: BaseMessage[] };

/** A compiled context in the `anthropic` format (`{ system, messages }`) as
 * LangChain messages in the blocks `ChatAnthropic` sends as they are: the
 * system blocks (with their cache marks) as the `SystemMessage`, each turn's
 * blocks as its message's content (an assistant turn's `tool_use` blocks
 * also as its `tool_calls`). */
export function toAnthropicLangChainMessages(request: {
  system?: string | ReadonlyArray<AnthropicTextBlock>;
  messages: ReadonlyArray<AnthropicMessage>;
}): { systemMessage: SystemMessage; messages: BaseMessage[] };

/** An interrupt of `humanInTheLoopMiddleware`, as `agent.invoke` returns it in `__interrupt__`. */
export interface HitlInterrupt {
  readonly value?: { readonly actionRequests?: ReadonlyArray<{ readonly name: string; readonly args?: unknown }> };
}

/**
 * Records in `session` the calls a run stopped on for
 * `humanInTheLoopMiddleware` (`result.__interrupt__` of `agent.invoke`, or
 * that list), each once: an `approval_requested` per action request, for the
 * recorded call with no outcome it names. `contextMiddleware` records the
 * decisions given with `Command({ resume: { decisions } })` as they take
 * effect. Sync the session afterwards. Returns the events recorded (none for
 * a run that did not stop). Throws `INVALID_ARGUMENT` for a session or
 * result of another kind.
 */
export function recordApprovals(session: LangChainSession, result: { readonly __interrupt__?: ReadonlyArray<HitlInterrupt> } | ReadonlyArray<HitlInterrupt>): ApprovalEvent[];
