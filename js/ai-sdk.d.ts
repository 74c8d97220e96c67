// agent-context-compiler/ai-sdk: what the Vercel AI SDK needs from this
// package (`ai` is an optional peer dependency).
import type { LanguageModelMiddleware, ModelMessage, Tool, ToolSet } from "ai";
import type { ArtifactStoreLike, CacheReport, Json, JsonSchemaObject, Ledger } from "../pkg/types/context_compiler.js";
import type { ApprovalEvent, ApprovalSession, IntegrationOptions, LookBackSession, ThreadSession } from "./integration.js";

export { compileMetadata } from "./integration.js";
export type { ApprovalEvent, ApprovalSession, CompileMetadata, CompileMetadataSource, LookBackSession, ThreadSession } from "./integration.js";

/** A tool a run offers: its name, what it does, and its arguments' JSON
 * Schema (a `ToolSpec` with its `parameters`). */
export interface AiSdkToolSpec {
  name: string;
  description?: string;
  /** The arguments' JSON Schema: a `JSONSchema7` (`@types/json-schema`'s or
   * the `ai` package's), zod 4's `z.toJSONSchema()` output, or a literal. */
  parameters: JsonSchemaObject;
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
   * giving the session of a thread id (`providerOptions.agentContextCompiler.sessionId`),
   * called once per model call: when it gives `undefined` or `null`, the
   * session `store` saved under the id is used. */
  session: MiddlewareSession | ((sessionId: string) => ThreadSession<MiddlewareSession>);
}

/** What the middleware calls on a session (a `Session` of this package). */
export interface MiddlewareSession extends ApprovalSession {
  record(kind: string, data: unknown, options?: object): unknown;
  recordReply(reply: object): { toolCalls: Array<{ name: string; arguments: unknown; callOptions: { callId?: string; thoughtSignature?: string; reasoning?: unknown } }> };
  recordUsage(usage: object): unknown;
  sync(store: never, options?: object): Promise<unknown>;
  readonly eventLog: { readonly length: number; readonly events: ReadonlyArray<{ kind: string; data: any }>; free(): void };
}

/** What the middleware reads of a compiled context (a `WorkingContext`). */
export interface MiddlewareContext {
  toMessages(options: { format: "ai-sdk" }): unknown;
  /** Handed over as the reply's `providerMetadata.agentContextCompiler.ledger`. */
  readonly ledger: Ledger;
  /** Handed over as the reply's `providerMetadata.agentContextCompiler.cache`. */
  readonly cache: CacheReport | null;
  free(): void;
}

/**
 * Middleware for `wrapLanguageModel` (AI SDK 7): each model call of
 * `generateText` / `streamText` is compiled from the session under the
 * budget (what is new in the prompt is recorded first; the model gets the
 * compiled prompt with the step's tools), and the reply is recorded with its
 * tool calls and usage; with `store`, the session is synced to it after
 * every step. Each reply's `providerMetadata.agentContextCompiler` is its
 * compile's `{ ledger, cache }` (read it with `compileMetadata`). The app
 * keeps its `messages`, `tools` (with `execute`: their results are
 * recorded, redacted, from the next step's prompt; spread `lookBackTools`
 * among them) and `stopWhen`. A call the SDK retries records nothing twice.
 * Throws `INVALID_ARGUMENT` for an unknown option.
 */
export function contextMiddleware(options: ContextMiddlewareOptions): LanguageModelMiddleware;

/** Options of `lookBackTools`. */
export interface LookBackToolsOptions {
  /** The session the tools look back over (a `Session` of this package). */
  session: LookBackSession;
  /** Where `read_artifact` reads the outputs stored instead of shown (the
   * `ArtifactAttacher`'s store, or the tool handler's). */
  artifactStore?: ArtifactStoreLike;
}

/** A tool with its `execute`. */
type ExecutableTool<Input, Output> = Tool<Input, Output> & { execute: NonNullable<Tool<Input, Output>["execute"]> };

/** The look-back tools as AI SDK tools, each with its `execute`. */
export type LookBackToolSet = {
  /** Searches everything said earlier in the conversation. */
  search_history: ExecutableTool<{ query: string; limit?: number }, Json>;
  /** Reads part of a stored tool output by its handle, or the whole text of an event by its id. */
  read_artifact: ExecutableTool<{ handle: string; offset?: number; length?: number }, Json>;
};

/**
 * The look-back tools (`search_history`, `read_artifact`) over `session` as
 * an AI SDK `ToolSet` with `execute`, to spread into `generateText`'s
 * `tools` beside the app's (a middleware cannot add tools the SDK runs):
 * `tools: { ...yours, ...lookBackTools({ session, artifactStore }) }`.
 * `read_artifact` reads the outputs `artifactStore` holds for this session.
 * What a call gets wrong (a handle the session does not name, bad
 * arguments) reaches the model as its tool error. Throws
 * `INVALID_ARGUMENT` for an unknown option, or a `session` or
 * `artifactStore` that is not one.
 */
export function lookBackTools(options: LookBackToolsOptions): LookBackToolSet;

/** The model-level prompt a language model gets (`LanguageModelV4Prompt`). */
export type LanguageModelPrompt = Parameters<NonNullable<LanguageModelMiddleware["transformParams"]>>[0]["params"]["prompt"];

/** A compiled context in the `ai-sdk` format as the model-level prompt
 * (`LanguageModelV4Prompt`): instructions as system messages, contents as parts. */
export function toLanguageModelPrompt(request: { instructions?: unknown[]; messages: unknown[] }): LanguageModelPrompt;

/**
 * Records in `session` what the AI SDK's `messages` (the `ModelMessage`s the
 * host keeps: `result.responseMessages` appended, then the tool message of
 * its `tool-approval-response` parts) hold of a pause for approvals, each
 * once: the results of the calls that ran before it, an
 * `approval_requested` per `tool-approval-request` part, and a decision per
 * `tool-approval-response` part (an edit when the call's `input` was
 * changed in `messages` before approving; a denial with its reason). Sync
 * the session afterwards. Returns the approval events recorded. Throws
 * `INVALID_ARGUMENT` for a session or messages of another kind.
 */
export function recordApprovals(session: MiddlewareSession, messages: ReadonlyArray<ModelMessage>): ApprovalEvent[];
