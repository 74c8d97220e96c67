// agent-context-compiler/ai-sdk: what the Vercel AI SDK needs from this
// package (`ai` is an optional peer dependency).
import type { LanguageModelMiddleware, ToolSet } from "ai";
import type { IntegrationOptions } from "./integration.js";

/** A tool a run offers: its name, what it does, and its arguments' JSON Schema. */
export interface AiSdkToolSpec {
  name: string;
  description?: string;
  parameters: { [key: string]: unknown };
}

/**
 * The tools a run offers (as `runCompiled` hands them to its model in the
 * `ai-sdk` format) as an AI SDK `ToolSet`: each schema wrapped with
 * `jsonSchema()`, and no `execute`, so that the SDK returns the calls and the
 * run records and runs them. Throws `INVALID_ARGUMENT` for a spec without a
 * name or schema, or two with one name.
 */
export function aiSdkTools(specs: ReadonlyArray<AiSdkToolSpec>): ToolSet;

/** Options of `contextMiddleware`: the session (or one per thread), the
 * compiler and budget of every model call, and the compile's own options. */
export interface ContextMiddlewareOptions extends IntegrationOptions<MiddlewareContext> {
  /** The session each call is compiled from and recorded into, or a function
   * giving the session of a thread id (`providerOptions.agentContextCompiler.sessionId`). */
  session: MiddlewareSession | ((sessionId: string) => MiddlewareSession | Promise<MiddlewareSession>);
}

/** What the middleware calls on a session (a `Session` of this package). */
export interface MiddlewareSession {
  record(kind: string, data: unknown, options?: object): unknown;
  recordReply(reply: object): { toolCalls: Array<{ name: string; arguments: unknown; callOptions: { callId?: string; thoughtSignature?: string; reasoning?: unknown } }> };
  recordUsage(usage: object): unknown;
  sync(store: never, options?: object): Promise<unknown>;
  readonly eventLog: { readonly length: number; free(): void };
}

/** What the middleware reads of a compiled context (a `WorkingContext`). */
export interface MiddlewareContext {
  toMessages(options: { format: "ai-sdk" }): unknown;
  free(): void;
}

/**
 * Middleware for `wrapLanguageModel` (AI SDK 7): each model call of
 * `generateText` / `streamText` is compiled from the session under the
 * budget (what is new in the prompt is recorded first; the model gets the
 * compiled prompt with the step's tools), and the reply is recorded with its
 * tool calls and usage. The app keeps its `messages`, `tools` (with
 * `execute`: their results are recorded, redacted, from the next step's
 * prompt) and `stopWhen`. Throws `INVALID_ARGUMENT` for an unknown option.
 */
export function contextMiddleware(options: ContextMiddlewareOptions): LanguageModelMiddleware;

/** The model-level prompt a language model gets (`LanguageModelV4Prompt`). */
export type LanguageModelPrompt = Parameters<NonNullable<LanguageModelMiddleware["transformParams"]>>[0]["params"]["prompt"];

/** A compiled context in the `ai-sdk` format as the model-level prompt
 * (`LanguageModelV4Prompt`): instructions as system messages, contents as parts. */
export function toLanguageModelPrompt(request: { instructions?: unknown[]; messages: unknown[] }): LanguageModelPrompt;
