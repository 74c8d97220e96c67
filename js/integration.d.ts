// What the framework integrations' options share.
import type { ApprovalDecision, ArtifactStoreLike, CacheReport, CompileOptions, Json, Ledger, LookBackOptions, PendingApproval, SessionEvent, SyncStore } from "../pkg/types/context_compiler.js";

/** The compile's own options an integration passes on with every model call
 * (the format and the tools are the integration's: those the framework sends). */
export type IntegrationCompileOptions = Pick<
  CompileOptions,
  "systemPrompt" | "goal" | "policies" | "userPreferences" | "stateDigest" | "taskState" | "reserveOutput" | "usageMargin" | "model" | "tracer"
>;

/** The options every integration takes besides its session: the compiler
 * and budget of every model call, the store synced after every step, and the
 * compile's own options. */
export interface IntegrationOptions<Context> extends IntegrationCompileOptions {
  /** Compiles every model call (the recommended pipeline in the zoned layout). */
  compiler: { compile(session: never, budget: number, options?: object): Promise<Context> };
  /** The token budget of every model call: a positive integer or a `TokenBudget`. */
  budget: number | object;
  /** Synced after every step (`session.sync(store)`), and where the session
   * of a thread is loaded from (`store.loadSession(id)`) when the session
   * function gives none: any store of this package
   * (`MemoryArtifactStore`, `FsArtifactStore`, `SqliteArtifactStore`,
   * `KvArtifactStore`, ...) or an object with the same two methods. */
  store?: SyncStore;
  /** The system prompt; by default the framework's own (its system messages, the agent's instructions). */
  systemPrompt?: string;
}

/** The session of a thread, as a session function gives it: `undefined` or
 * `null` when it has none, and then the one the integration's `store` saved
 * under the thread's id is used (no store, or none saved there, is
 * `INVALID_ARGUMENT` naming the thread). */
export type ThreadSession<S> = S | null | undefined | Promise<S | null | undefined>;

/** What the look-back tools call on a session (`Session.lookBack`). */
export interface LookBackSession {
  /** Answers a call of `search_history` or `read_artifact` (the outputs
   * `options.artifactStore` holds). */
  lookBack(name: string, args: Record<string, Json>, options?: LookBackOptions): Promise<Json>;
}

/** The options of the integrations that offer the look-back tools. */
export interface LookBackToolOptions {
  /** Where `read_artifact` reads the outputs stored instead of shown (the
   * `ArtifactAttacher`'s store, or the tool handler's): any artifact store of
   * this package, or an object of your own (`ArtifactStoreLike`). */
  artifactStore?: ArtifactStoreLike;
  /** Offer the look-back tools `search_history` and `read_artifact` to the
   * model (run over the thread's session); default `true`. */
  lookBackTools?: boolean;
}

/** What a model call's compile held and repeated, as the integrations hand
 * it over (AI SDK: `providerMetadata.agentContextCompiler`; LangChain:
 * `response_metadata.agentContextCompiler`). */
export interface CompileMetadata {
  /** What the compiled context held and why, and what it left out (`WorkingContext.ledger`). */
  ledger: Ledger;
  /** How much of it repeated the previous compile's (`WorkingContext.cache`). */
  cache: CacheReport;
}

/** What `compileMetadata` reads: an AI SDK `generateText` result or step
 * (`providerMetadata`), or a LangChain message (`response_metadata`). A
 * `streamText` result's `providerMetadata` is a promise: pass a step
 * (`(await result.steps).at(-1)`) or `{ providerMetadata: await result.providerMetadata }`. */
export type CompileMetadataSource =
  | { readonly providerMetadata?: { readonly [provider: string]: unknown } | undefined }
  | { readonly response_metadata?: { readonly [key: string]: unknown } | undefined };

/**
 * The `{ ledger, cache }` a model call's compile reported, read from an AI
 * SDK `generateText` result or step (`providerMetadata.agentContextCompiler`)
 * or a LangChain message (`response_metadata.agentContextCompiler`);
 * `undefined` when it has none (a reply the integration did not compile,
 * `undefined` itself).
 */
export function compileMetadata(result: CompileMetadataSource | null | undefined): CompileMetadata | undefined;

/** An event the integrations record to approve a call (`approval_requested`, `approval_decided`). */
export type ApprovalEvent = SessionEvent;

/** What the integrations call on a session to record a pause for approvals (a `Session` of this package). */
export interface ApprovalSession {
  /** The calls requested and not decided, in order. */
  pendingApprovals(): PendingApproval[];
  /** Records that the recorded, unanswered call `callId` waits for a person. */
  requestApproval(callId: string): SessionEvent;
  /** Records a person's decision on the pending call `callId`. */
  decideApproval(callId: string, decision: ApprovalDecision): SessionEvent;
}
