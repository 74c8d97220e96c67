// agent-context-compiler/langchain: middleware for LangChain's createAgent
// (`langchain` 1.x is an optional peer dependency).
import type { AgentMiddleware } from "langchain";
import type { BaseMessage, SystemMessage } from "@langchain/core/messages";
import type { IntegrationOptions } from "./integration.js";

/** What the middleware calls on a session (a `Session` of this package). */
export interface LangChainSession {
  record(kind: string, data: unknown, options?: object): { data: any };
  recordUsage(usage: object): unknown;
  sync(store: never, options?: object): Promise<unknown>;
  readonly eventLog: { readonly events: ReadonlyArray<{ kind: string; data: any }> };
}

/** Options of `contextMiddleware`: the session (or one per thread), the
 * compiler and budget of every model call, and the compile's own options. */
export interface LangChainContextOptions extends IntegrationOptions<{ toMessages(options: { format: "openai" }): unknown; free(): void }> {
  /** The session, or a function giving the session of a thread
   * (`runtime.configurable.thread_id`). */
  session: LangChainSession | ((threadId: string) => LangChainSession | Promise<LangChainSession>);
}

/**
 * Middleware for `createAgent` (langchain 1.x): each model call gets the
 * compiled `messages` and `systemMessage` (the checkpointed thread is left
 * as it is), what the state holds is recorded once (by message id), and
 * `wrapToolCall` records each tool result and returns it redacted. Throws
 * `INVALID_ARGUMENT` for an unknown option.
 */
export function contextMiddleware(options: LangChainContextOptions): AgentMiddleware;

/** Compiled messages in the `openai` format as LangChain messages: the
 * leading system messages as one `SystemMessage`, the rest in order. */
export function toLangChainMessages(compiled: ReadonlyArray<unknown>): { systemMessage: SystemMessage; messages: BaseMessage[] };
