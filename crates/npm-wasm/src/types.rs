//! TypeScript declarations for the plain objects the classes take and return.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
// The data types generated from the Rust types (js/types/, src/typescript.rs).
import type { Json } from "../../js/types/Json.js";
import type { SessionEvent } from "../../js/types/SessionEvent.js";
import type { EvidenceEntry } from "../../js/types/EvidenceEntry.js";
import type { EvidencePack } from "../../js/types/EvidencePack.js";
import type { ArtifactHandle } from "../../js/types/ArtifactHandle.js";
import type { SaveReport } from "../../js/types/SaveReport.js";
import type { SyncReport } from "../../js/types/SyncReport.js";
import type { SchemaError } from "../../js/types/SchemaError.js";
import type { ValidationResult } from "../../js/types/ValidationResult.js";
import type { ZoneName } from "../../js/types/ZoneName.js";
import type { CompactionLevel } from "../../js/types/CompactionLevel.js";
import type { ZoneUsage } from "../../js/types/ZoneUsage.js";
import type { DropAction } from "../../js/types/DropAction.js";
import type { Message } from "../../js/types/Message.js";
import type { ContextItem } from "../../js/types/ContextItem.js";
import type { WindowDrop } from "../../js/types/WindowDrop.js";
import type { CompiledContext } from "../../js/types/CompiledContext.js";
import type { ContextStats } from "../../js/types/ContextStats.js";
import type { SearchHit } from "../../js/types/SearchHit.js";
import type { RecalledTurn } from "../../js/types/RecalledTurn.js";
import type { BudgetPlan } from "../../js/types/BudgetPlan.js";
import type { ModelUsage } from "../../js/types/ModelUsage.js";
import type { Ledger } from "../../js/types/Ledger.js";
import type { Included } from "../../js/types/Included.js";
import type { Excluded } from "../../js/types/Excluded.js";
import type { InclusionReason } from "../../js/types/InclusionReason.js";
import type { ExclusionReason } from "../../js/types/ExclusionReason.js";
import type { CacheReport } from "../../js/types/CacheReport.js";
import type { CacheMiss } from "../../js/types/CacheMiss.js";
import type { MissCause } from "../../js/types/MissCause.js";
import type { PendingApproval } from "../../js/types/PendingApproval.js";
export type { Json, SessionEvent, EvidenceEntry, EvidencePack, ArtifactHandle, SaveReport, SyncReport, SchemaError, ValidationResult, ZoneName, CompactionLevel, ZoneUsage, DropAction, Message, ContextItem, WindowDrop, CompiledContext, ContextStats, SearchHit, RecalledTurn, BudgetPlan, ModelUsage, Ledger, Included, Excluded, InclusionReason, ExclusionReason, CacheReport, CacheMiss, MissCause, PendingApproval };

/** Stable error codes carried by `error.code`. */
export type ErrorCode =
  | "INVALID_BUDGET" | "INVALID_TOKEN_COUNT" | "INVALID_ARGUMENT" | "NOT_SERIALIZABLE"
  | "INVALID_SESSION_IMPORT" | "INVALID_SCHEMA" | "ARTIFACT_INTEGRITY" | "ARTIFACT_INCOMPLETE"
  | "STORE_FAILED" | "STORE_QUOTA_EXCEEDED" | "STORE_BLOCKED" | "STORE_CLOSED" | "STORE_UNAVAILABLE"
  | "STORE_UNSUPPORTED" | "STORE_INVALID_VALUE" | "STORE_CORRUPT" | "STORE_CONFLICT" | "STORE_TIMEOUT" | "MEMORY_FAILED"
  | "PROCESSOR_FAILED" | "BUDGET_TOO_SMALL" | "SESSION_BUSY" | "HANDLER_FAILED" | "HANDLER_TIMEOUT"
  | "MODEL_FAILED" | "TOKEN_COUNTER_FAILED" | "GUARD_FAILED" | "ABORTED" | "STORE_VERSION" | "NOT_INITIALIZED"
  | "OUT_OF_MEMORY" | "INTERNAL_PANIC" | "MODULE_POISONED";

/** Every error this library throws or rejects with. */
export interface ContextCompilerError extends Error {
  name: "ContextCompilerError";
  code: ErrorCode;
}

/** Which built-in token counter to use: calibrated on o200k_base, or words × 1.3. */
export type TokenCounterName = "default" | "words";

/**
 * A counter of your own, such as a provider's tokenizer or one of the exact
 * tokenizers (`loadTokenizer`). `count` must answer synchronously with a
 * non-negative number (fractions round up); a count that throws or answers
 * anything else fails the call that counted with `TOKEN_COUNTER_FAILED`.
 */
export interface TokenCounter {
  count(text: string): number;
  /** Tokens the provider adds around each chat message; 0 when absent. */
  readonly messageOverhead?: number;
}

/** A built-in counter's name, a function `(text) => tokens`, or a {@link TokenCounter}. */
export type TokenCounterOption = TokenCounterName | ((text: string) => number) | TokenCounter;

export interface SessionOptions { sessionId?: string; tokenCounter?: TokenCounterOption }
export interface EventLogOptions { tokenCounter?: TokenCounterOption }
export interface ImportOptions { tokenCounter?: TokenCounterOption }
/** Options of `session.search`. */
export interface SearchOptions {
  /** Results at most: 1 to 100; default 10. */
  limit?: number;
}
/** `tokenEstimate`: a non-negative integer; computed from the content when absent. */
export interface RecordOptions { tokenEstimate?: number }
/**
 * `Session.record`'s options: the token estimate, and `redact` (default
 * `true`): a tool event's output (`tool_success.result`), error
 * (`tool_error.error`) and arguments (`tool_call.arguments`) are redacted
 * before they are recorded, and counted after; `false` for a caller that
 * redacted them itself.
 */
export interface SessionRecordOptions extends RecordOptions { redact?: boolean }

/** Event kinds the compiler understands; any other non-empty string is allowed too. */
export type SessionEventKind =
  | "user_input" | "assistant_output" | "phase_result" | "memory_hit" | "tool_call"
  | "tool_success" | "tool_error" | "tool_timeout" | "artifact_stored" | "guard_decision"
  | (string & {});


export interface Session {
  /**
   * Records an event and returns it. `data` must be JSON-compatible; the
   * returned event's `data` is its JSON form (`toJSON` applied, `undefined`
   * members left out), sharing its strings with `data`.
   */
  record(kind: SessionEventKind, data: Json, options?: SessionRecordOptions): SessionEvent;
  /**
   * Saves this session to `store`, which other writers (processes, workers,
   * tabs) save it to as well. When another writer saved first, the events
   * it saved are loaded and placed before this session's own unsaved ones
   * (the store's commit order, the same for every reader; the events
   * recorded between two syncs stay together) and the save is tried again
   * after a jittered backoff. Resolves once every event of this session is
   * saved, each exactly once. After `maxTries` conflicts it rejects with
   * `STORE_CONFLICT`: nothing is lost, the session holds what the others
   * saved and its own events, unsaved, for the next `sync`.
   */
  sync(store: SyncStore, options?: SyncOptions): Promise<SyncReport>;
}

/** What `session.sync` saves to: any artifact store of this package, or an object with the same two methods. */
export interface SyncStore {
  saveSession(session: Session): Promise<SaveReport>;
  loadSession(sessionId: string): Promise<Session | null>;
}
/** Options of `session.sync`. */
export interface SyncOptions {
  /** Saves tried at most before `STORE_CONFLICT`: 1 to 1000; default 8. */
  maxTries?: number;
  /** The backoff ceiling after the first conflict, in ms, doubled after each (the wait is drawn uniformly below it); default 10. */
  baseDelayMs?: number;
  /** The highest backoff ceiling, in ms; default 1000. */
  maxDelayMs?: number;
}

export interface EventLog {
  /** Appends an event and returns it, as `Session.record` does. */
  append(kind: SessionEventKind, data: Json, options?: RecordOptions): SessionEvent;
}


/** A tool call made by an assistant message (zoned layout). */
export interface ToolCallPart { id: string; name: string; arguments: Json; /** Gemini's thought signature, sent back with the call. */ signature?: string; /** The `tool_call` event it was recorded as (absent for a call made up for an outcome recorded without one). */ eventId?: string }
export interface HistoryMessage {
  role: string;
  content: string;
  eventId?: string;
  /** Zoned layout: the calls an assistant message makes, each answered by the `tool` messages after it. */
  toolCalls?: ToolCallPart[];
  /** Zoned layout: the call a `tool` message answers. */
  toolCallId?: string;
  toolName?: string;
  /** A `tool` message reporting an error or a timeout. */
  isError?: boolean;
  /** The artifact a `tool` message's output was externalised to (the content is its handle and summary). */
  artifact?: ArtifactRef;
  /** The output was masked by compaction (the content is a summary). */
  masked?: boolean;
  /** `"persistent"` for the first turns a history selector pins. */
  zone?: ZoneName;
  /** Position of the source event in the session log. */
  position?: number;
  /** Reasoning sent back with this assistant turn, in its own format only. */
  reasoning?: { format: "anthropic" | "openai-responses"; items: Json[] };
  /** Images and files the message carries, each with its cost. */
  media?: MediaPart[];
}
export interface MemoryHit { key: string; content: string; category?: string }
export interface ArtifactRef { handle: string; summary: string; sizeBytes: number; source?: string; eventId?: string }
export interface ToolResult { tool: string; result: string; eventId?: string }
export interface DroppedItem {
  section: "systemPrompt" | "history" | "memoryHits" | "artifactRefs" | "toolResults" | "recalled" | "summary" | "goal" | "taskState" | "reasoning";
  action: DropAction;
  eventId?: string;
  tokensRemoved: number;
  /** The memory's key, for a memory hit. */
  key?: string;
}

/**
 * A JSON Schema object, such as a tool's `parameters`: `@types/json-schema`'s
 * (or the `ai` package's) `JSONSchema7`, zod 4's `z.toJSONSchema()` output,
 * or a literal. Typed as any object, since such interfaces have no index
 * signature; it must be JSON (its own enumerable members are sent).
 */
export type JsonSchemaObject = object;

export type Layout = "single-system" | "zoned";
/** What the zoned layout shows besides the session (all optional; the single-system layout ignores them). */
export interface ZonedOptions {
  /** SYSTEM zone, `## Policies`. */
  policies?: string[];
  /** SYSTEM zone, `## Available Tools` (names): `ToolSpec`s, or any JSON
   * objects with a `name` (counted as tools when `tools` is absent). */
  toolDefinitions?: Array<ToolSpec | ({ name: string } & { [key: string]: Json })>;
  /** SYSTEM zone, `## User Preferences`. */
  userPreferences?: { [key: string]: Json };
  /** PERSISTENT zone, and restated last. */
  goal?: string;
  /** PERSISTENT zone, `## Brain State`. */
  stateDigest?: { [key: string]: Json };
  /** RECENT zone, `## Current Task`. */
  taskState?: string;
}
/** The zoned layout's parts besides the history. */
export interface ZonedParts extends ZonedOptions {
  layout?: Layout;
  /** Memories pinned for the session (PERSISTENT zone, `## Pinned memories`). */
  pinnedMemories?: MemoryHit[];
  /** The compaction summary of earlier conversation. */
  summary?: string;
}
/** What `new WorkingContext(init)` takes: the fields of a context, each but
 * `systemPrompt` optional, so that a context's own `toJSON()` builds it again. */
export interface WorkingContextInit extends Partial<WorkingContextData> {
  systemPrompt: string;
}
/** The plain-object form of a `WorkingContext`, as custom processors get it. */
export interface WorkingContextData extends ZonedParts {
  systemPrompt: string;
  history: HistoryMessage[];
  memoryHits: MemoryHit[];
  artifactRefs: ArtifactRef[];
  toolResults: ToolResult[];
  tokenCount: number;
  budget: number;
  dropped: DroppedItem[];
  /** Turns recalled from earlier in the session (`HistoryRecall`, zoned layout); absent when none. */
  recalled?: RecalledTurn[];
  layout: Layout;
  compactionLevel: CompactionLevel;
  zoneUsage: ZoneUsage;
  /** How the compile's budget became `budget`; absent for a context built by hand. */
  budgetPlan?: BudgetPlan;
  /** Tokens of the tools the request offers, counted in SYSTEM; absent when none. */
  toolTokens?: number;
  /** How much of the context repeats the previous compile's; absent for a context built by hand. */
  cache?: CacheReport;
  /** How many of the session's events the compile read (the ledger's
   * `window` entry counts what it left of them); absent for a context built by hand. */
  eventsSeen?: number;
}

/** OpenAI Chat Completions request messages. */
export type OpenAiMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | OpenAiUserPart[] }
  | { role: "assistant"; content: string | null; tool_calls?: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }> }
  | { role: "tool"; tool_call_id: string; content: string };
/** A Chat Completions user content part: text, an image (a data URL or an
 * https URL) or a PDF (a data URL). */
export type OpenAiUserPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string; detail?: "low" | "high" | "auto" } }
  | { type: "file"; file: { filename?: string; file_data?: string } };
export interface AnthropicCacheControl { type: "ephemeral" }
/** An Anthropic image block: base64 bytes or a URL. */
export interface AnthropicImageBlock {
  type: "image";
  source: { type: "base64"; media_type: "image/png" | "image/jpeg" | "image/gif" | "image/webp"; data: string } | { type: "url"; url: string };
  cache_control?: AnthropicCacheControl;
}
/** An Anthropic document block (a PDF): base64 bytes or a URL. */
export interface AnthropicDocumentBlock {
  type: "document";
  source: { type: "base64"; media_type: "application/pdf"; data: string } | { type: "url"; url: string };
  cache_control?: AnthropicCacheControl;
}
/** Anthropic's signed reasoning, sent back first in its assistant message. */
export type AnthropicThinkingBlock = { type: "thinking"; thinking: string; signature: string } | { type: "redacted_thinking"; data: string };
export interface AnthropicTextBlock { type: "text"; text: string; cache_control?: AnthropicCacheControl }
export interface AnthropicToolUseBlock { type: "tool_use"; id: string; name: string; input: { [key: string]: Json }; cache_control?: AnthropicCacheControl }
export interface AnthropicToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content: string | Array<AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock>;
  is_error?: boolean;
  cache_control?: AnthropicCacheControl;
}
/** Anthropic's `compaction` block (`BetaCompactionBlockParam`), sent back
 * as it came: first in the conversation, only the latest. */
export interface AnthropicCompactionBlock {
  type: "compaction";
  content?: string | null;
  encrypted_content?: string | null;
  signature?: string | null;
  tool_changes?: unknown[] | null;
  cache_control?: AnthropicCacheControl | null;
}
export interface AnthropicMessage {
  role: "user" | "assistant";
  content: Array<AnthropicTextBlock | AnthropicToolUseBlock | AnthropicToolResultBlock | AnthropicImageBlock | AnthropicDocumentBlock | AnthropicThinkingBlock>;
}
/** The `system` and `messages` of an Anthropic Messages request (what
 * `client.messages.create` takes). When the session holds an Anthropic
 * compaction (see `Session.recordCompaction`), `betas` is
 * `["compact-2026-01-12"]` and the first message is the assistant's with
 * that `AnthropicCompactionBlock` first: send it with
 * `client.beta.messages.create`, which takes both. */
export interface AnthropicRequest { system?: AnthropicTextBlock[]; messages: AnthropicMessage[]; betas?: Array<"compact-2026-01-12"> }
/** OpenAI's compaction item (`ResponseCompactionItemParam`), the last item
 * of a `responses.compact` output. */
export interface ResponsesCompactionItem { type: "compaction"; encrypted_content: string; id?: string | null }
/** What `Session.recordCompaction` takes: an Anthropic `compaction` block
 * or a message holding one; the result of `responses.compact`
 * (`CompactedResponse`, the user messages then one compaction item) or its
 * `output`. */
export type ProviderCompactionOutput =
  | AnthropicCompactionBlock
  | { content: readonly unknown[] }
  | { output: readonly unknown[] }
  | readonly unknown[];
/** `Session.recordCompaction`'s options. */
export interface RecordCompactionOptions {
  /** The format the compaction is sent back in. */
  format: "anthropic" | "openai-responses";
}
/** Vercel AI SDK `ModelMessage` (assignable to the `ai` package's type). */
export type AiSdkMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | Array<{ type: "text"; text: string } | { type: "image"; image: string; mediaType?: string } | { type: "file"; data: string; mediaType: string; filename?: string }> }
  | { role: "assistant"; content: string | Array<{ type: "text"; text: string } | { type: "tool-call"; toolCallId: string; toolName: string; input: unknown }> }
  | {
      role: "tool";
      content: Array<{
        type: "tool-result";
        toolCallId: string;
        toolName: string;
        output:
          | { type: "text"; value: string }
          | { type: "error-text"; value: string }
          | { type: "content"; value: Array<{ type: "text"; text: string } | { type: "file"; data: { type: "data"; data: string }; mediaType: string }> };
      }>;
    };
/** Vercel AI SDK `SystemModelMessage` (assignable to the `ai` package's type). */
export type AiSdkSystemMessage = {
  role: "system";
  content: string;
  providerOptions?: { anthropic: { cacheControl: { type: "ephemeral" } } };
};
/** What `format: "ai-sdk"` gives: spread into `generateText({ model, ...request })`. */
export interface AiSdkRequest {
  /** The leading zones (the `ai` package takes system text here only). */
  instructions: AiSdkSystemMessage[];
  /** The conversation, then the per-turn tail as user text. */
  messages: AiSdkMessage[];
}
/** OpenAI Responses input items (assignable to the `openai` package's `ResponseInputItem`). */
export type OpenAiResponsesItem =
  | { type: "message"; role: "user" | "assistant" | "developer"; content: string | OpenAiResponsesContent[] }
  | { type: "function_call"; call_id: string; name: string; arguments: string }
  | { type: "function_call_output"; call_id: string; output: string | OpenAiResponsesContent[] }
  | { type: "reasoning"; id: string; summary: Array<{ type: "summary_text"; text: string }>; encrypted_content?: string | null }
  | ResponsesCompactionItem;
/** Responses input content: text, an image (a data URL or an https URL), a PDF. */
export type OpenAiResponsesContent =
  | { type: "input_text"; text: string }
  | { type: "input_image"; image_url: string; detail: "low" | "high" | "auto" }
  | { type: "input_file"; filename?: string; file_data?: string; file_url?: string };
/** What `format: "openai-responses"` gives: spread into `client.responses.create({ model, ...request })`. */
export interface OpenAiResponsesRequest {
  /** The leading zones, joined by blank lines. */
  instructions?: string;
  /** The conversation, then the per-turn tail as a `developer` message. */
  input: OpenAiResponsesItem[];
}
/** A Gemini content part (assignable to the `@google/genai` package's `Part`). */
export type GeminiPart =
  | { text: string }
  | { inlineData: { mimeType: string; data: string } }
  | { fileData: { mimeType: string; fileUri: string } }
  | { functionCall: { id: string; name: string; args: { [key: string]: Json } }; thoughtSignature?: string }
  | { functionResponse: { id: string; name: string; response: { output: string } | { error: string } } };
/** A Gemini content (assignable to the `@google/genai` package's `Content`). */
export interface GeminiContent { role: "user" | "model"; parts: GeminiPart[] }
/** What `format: "gemini"` gives: `ai.models.generateContent({ model, contents: request.contents, config: { systemInstruction: request.systemInstruction } })`. */
export interface GeminiRequest {
  /** The leading zones, a part each. */
  systemInstruction?: { parts: Array<{ text: string }> };
  /** The conversation (user and model turns alternating), then the per-turn tail as user text. */
  contents: GeminiContent[];
}
export type MessageFormat = "openai" | "openai-responses" | "anthropic" | "gemini" | "ai-sdk";
export interface ToMessagesOptions {
  format?: MessageFormat;
  /** The model the request is for (by default the compile's `model`): in
   * the Anthropic format, cache breakpoints before its minimum cacheable
   * length are left out. */
  model?: string;
}
/** What `checkRequest` checks a request against: the format it is in, and the model it is for (the rules that depend on it: Anthropic's minimum cacheable length per model family). */
export interface CheckRequestOptions { format: MessageFormat | "plain"; model?: string }
/** An image or a PDF in an event (`media: [...]` beside a `user_input`'s text
 * or a tool outcome's result): where its bytes are and what its cost
 * depends on. `attachMedia` makes one; the bytes are never in the event.
 * (A type alias, so that it is `Json` and goes into `session.record`.) */
export type MediaPart = {
  type: "image" | "file";
  mediaType: "image/png" | "image/jpeg" | "image/gif" | "image/webp" | "application/pdf";
  /** The artifact holding the bytes (SHA-256, hex). */
  artifact?: string;
  /** Or an http(s) URL the provider fetches. */
  url?: string;
  sizeBytes?: number;
  width?: number;
  height?: number;
  /** A PDF's pages. */
  pages?: number;
  filename?: string;
  /** OpenAI's image detail. */
  detail?: "low" | "high" | "auto";
  /** In a compiled context: what the part costs in the compile's provider's tokens. */
  tokens?: number;
};
export interface AttachMediaOptions {
  /** Sniffed from the bytes when absent. */
  mediaType?: MediaPart["mediaType"];
  filename?: string;
  detail?: "low" | "high" | "auto";
  /** Where the bytes came from, for the store; default `"user"`. */
  source?: string;
  sessionId?: string;
}
/** A provider rule a request breaks: the rule (`<format>.<name>`), the JSON pointer of what breaks it, and why. */
export interface RequestProblem { rule: string; path: string; message: string }
export interface WorkingContext {
  /**
   * What the context holds and why, and what it left out: `included`, one
   * entry per part of its messages (`{ zone, eventIds, reason, tokens }`,
   * the tokens adding up to `tokenCount` after a compile), and `excluded`
   * (`{ eventIds, reason, tokens }`, from `dropped`, and one `{ reason:
   * "window", count, tokens }` for the turns of the session the window never
   * reached, while the session lives). Built when first read (`js/ledger.js`,
   * from the columns Rust hands over); each read returns a fresh object.
   */
  readonly ledger: Ledger;
  /** Plain `{ role, content }` messages. The array is new at each call; for
   * a context a `ContextCompiler` compiled, the message objects are frozen
   * and shared with its previous rendering of the same session where they
   * render the same. */
  toMessages(): Message[];
  /** OpenAI Chat Completions messages: assistant `tool_calls`, then one `tool` message per call. */
  toMessages(options: { format: "openai"; model?: string }): OpenAiMessage[];
  /** Anthropic `{ system, messages }`: `tool_use` / `tool_result` blocks, `cache_control` at the ends of the stable zones. */
  toMessages(options: { format: "anthropic"; model?: string }): AnthropicRequest;
  /** Vercel AI SDK `{ instructions, messages }` (`tool-call` / `tool-result` parts): `generateText({ model, ...request })`. */
  toMessages(options: { format: "ai-sdk"; model?: string }): AiSdkRequest;
  /** OpenAI Responses `{ instructions, input }`: `message`, `function_call` and `function_call_output` items. */
  toMessages(options: { format: "openai-responses"; model?: string }): OpenAiResponsesRequest;
  /** Gemini `{ systemInstruction, contents }`: `functionCall` / `functionResponse` parts, user and model turns alternating. */
  toMessages(options: { format: "gemini"; model?: string }): GeminiRequest;
  toMessages(options?: ToMessagesOptions | null): Message[] | OpenAiMessage[] | AnthropicRequest | AiSdkRequest | OpenAiResponsesRequest | GeminiRequest;
}

export interface ContextWindowOptions {
  /** Default 128000. */
  maxContextTokens?: number;
  /** Shares of the window per zone; missing zones keep `DEFAULT_ZONE_BUDGETS`; at most 1 in all. */
  zoneBudgets?: Partial<ZoneUsage>;
  tokenCounter?: TokenCounterOption;
}
export interface ImportanceOptions { importance?: number }
export interface ToolResultOptions { success?: boolean }
/** A model the library asks for summaries: resolves to the text. */
/** A language model: `signal` is aborted when the library stops waiting (a handler timeout). */
export type Summarizer = (prompt: string, options: { maxTokens: number; signal?: AbortSignal }) => string | Promise<string>;
export interface CompactorOptions {
  /** Writes compaction summaries; the built-in digest is used when absent or when it fails. */
  summarizer?: Summarizer | { complete: Summarizer };
  /** The utilisation a compaction brings the context down to; default 0.5, above 0 and below 0.8. */
  target?: number;
}

export interface StoreOptions { mimeType?: string; sessionId?: string }
/** An artifact store: any of the library's, or an object of your own with
 * these methods (handles as `store` makes them; content as bytes). */
export interface ArtifactStoreLike {
  store(content: Uint8Array | ArrayBuffer | string, source: string, options?: StoreOptions): Promise<ArtifactHandle>;
  retrieve(artifactId: string): Promise<Uint8Array | null>;
  exists(artifactId: string): Promise<boolean>;
  listHandles(sessionId?: string): Promise<ArtifactHandle[]>;
  delete(artifactId: string): Promise<boolean>;
}
/** What one `saveSession` wrote. */
export interface StoredArtifact { handle: ArtifactHandle; sessions: string[]; content: Uint8Array }

/** One remembered fact. Times are ms since the Unix epoch, set by the store. */
/** Who a session's bus events are about (`session.attachBus`). */
export interface AttachBusOptions {
  /** The agent on the events (default `"agent"`). */
  agentId?: string;
  /** Carried as `user_id`. */
  userId?: string;
  /** Carried as `user_display_name`. */
  userDisplayName?: string;
  /** Carried as `episode_id` (the monitor defaults it to the session id). */
  episodeId?: string;
}
export interface MemoryEntry {
  key: string;
  content: string;
  category?: string;
  /** Who or what the fact is about. */
  subject?: string;
  /** How sure its writer was, 0 to 1. */
  confidence?: number;
  /** What wrote it (`fact_extractor`, `sleep_reflection`, ...). */
  source?: string;
  createdAt?: number;
  lastRecalledAt?: number;
}
export interface MemoryStoreLike { recall(query: string, limit: number): MemoryEntry[] | Promise<MemoryEntry[]> }
export type MemoryRecallFunction = (query: string, limit: number) => MemoryEntry[] | Promise<MemoryEntry[]>;

export interface HistorySelectorOptions { keepFirst?: number; keepLast?: number }
/** Options of `new HistoryRecall(options)`. */
export interface HistoryRecallOptions {
  /** The share of the budget recalled turns may take: 0 to 1, default 0.5. */
  share?: number;
  /** The relevance a match needs: 0 to 1 (`SearchHit.relevance`), default 0. */
  minRelevance?: number;
  /** The distinction (`SearchHit.distinction`) one match outside the window needs for anything to be recalled: default 4; 0 recalls on every compile. */
  minDistinction?: number;
  /** Matching turns recalled at most: default and at most 100 (the share is usually the tighter bound). */
  matches?: number;
  /** Turns on each side of a match brought with it, and twice as many after a strong match (three quarters of the best score: what it led to, an answer, a call's result): default 1, at most 8. */
  neighbours?: number;
  /** Tokens a recalled turn keeps (its start): default 400. */
  turnTokens?: number;
  /** Ranks by meaning too: the question is asked for with `{ role: "query" }`, the turns outside the window with `{ role: "passage" }`, each turn once (cached by event id), in batches of 64, two at most at once, by the compile that needs them; its cosine ranking is fused with the lexical one. A compile whose embedder fails recalls lexically. */
  embedder?: EmbedTextsFunction | { embed: EmbedTextsFunction };
  /** Where the session's tool handler stored large outputs (their events hold only a summary): each is read once and indexed whole, so a loaded session recalls them by any part. */
  artifactStore?: ArtifactStoreLike;
  /** Milliseconds a compile waits for the embedder before it recalls lexically (the batches that came back stay cached): default 10,000. */
  embedderTimeoutMs?: number;
}
/** What the texts of one batch are to the model: the question searched with (`"query"`), or turns searched among (`"passage"`). Models with a prefix for each (e5's `query: ` / `passage: `, bge, nomic) embed them differently. */
export type EmbedRole = "query" | "passage";
/** Turns texts into vectors, one per text, all of one dimension; every text of a call has the same `role`. */
export type EmbedTextsFunction = (texts: string[], options: { role: EmbedRole }) => ArrayLike<number>[] | Promise<ArrayLike<number>[]>;
export interface MemoryPreloaderOptions {
  topK?: number;
  /** Zoned layout: keep recalled memories in the PERSISTENT zone for the session (recorded as pinned `memory_hit` events). */
  pin?: boolean;
}
export interface ArtifactAttacherOptions {
  /** Results of at least this many bytes are externalised (default 1024). */
  thresholdBytes?: number;
  /**
   * Results the model has not read yet (recorded after its latest reply)
   * stay whole while the budget holds them, and are handles from the next
   * model call on; `false` externalises them at once. Default `true`.
   */
  keepUnread?: boolean;
}
/** `Session.lookBack`'s options. */
export interface LookBackOptions {
  /** Where the session's externalised outputs are read from (the attacher's or the tool handler's store). */
  artifactStore?: ArtifactStoreLike;
}

/** A processor written in JS: gets a plain-object context, returns one (or a WorkingContext). */
export type ProcessorFunction = (session: Session, ctx: WorkingContextData, budget: number) =>
  WorkingContextInit | WorkingContext | Promise<WorkingContextInit | WorkingContext>;
export interface CustomProcessor { name?: string; process: ProcessorFunction }
export type Processor = HistorySelector | HistoryRecall | Compactor | MemoryPreloader | ArtifactAttacher | CustomProcessor | ProcessorFunction;

export interface ContextCompilerOptions {
  processors?: Processor[];
  /** `"single-system"` (default) or `"zoned"` (recommended: stable prefix, paired tool messages). */
  layout?: Layout;
  /** Where compiles read the bytes of the images and files they keep
   * (where `attachMedia` and the tool handler put them), so that
   * `toMessages` inlines them; without one, a part without a URL is sent
   * as a line naming its artifact. */
  mediaStore?: ArtifactStoreLike;
  /** Traces each compile as a `compile_context` span (an OpenTelemetry
   * `Tracer`, e.g. `trace.getTracer("my-agent")`). */
  tracer?: TracerLike;
}
/** What the package uses of an OpenTelemetry `Tracer` (`@opentelemetry/api`'s
 * `Tracer` is one; the package imports nothing of OpenTelemetry). A tracer
 * or span that throws is ignored. */
export interface TracerLike {
  startSpan(
    name: string,
    options?: { kind?: number; attributes?: { [key: string]: string | number | boolean | string[] } },
    context?: unknown,
  ): SpanLike;
}
/** What the package uses of an OpenTelemetry `Span`. */
export interface SpanLike {
  setAttributes(attributes: { [key: string]: string | number | boolean | string[] }): unknown;
  setAttribute(key: string, value: string): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  end(): void;
}

export interface Finding { rule: string; path?: string; start: number; end: number }
export interface Redaction { text: string; findings: Finding[] }
export interface NormalizedOutput {
  valid: boolean;
  data: Json;
  isJson: boolean;
  /** At most 200 characters, from the redacted output. */
  summaryConcise: string;
  /** At most 2,000 characters, from the redacted output. */
  summaryDetailed: string;
  redactedFields: Finding[];
  validationErrors: SchemaError[];
}
export type ToolEventKindName = "tool_call" | "tool_success" | "tool_error" | "tool_timeout";
export interface ToolEventInit {
  kind: ToolEventKindName;
  toolName: string;
  arguments?: Json;
  result?: string | null;
  error?: string | null;
  latencyMs?: number;
  normalized?: NormalizedOutput | null;
}
export interface ToolEventData {
  eventId: string; timestamp: number; kind: ToolEventKindName; toolName: string; arguments: Json;
  result: string | null; error: string | null; latencyMs: number; normalized: NormalizedOutput | null;
  artifact?: ArtifactHandle;
}
/** What a tool gets besides its name and arguments: a signal aborted when the call times out. */
export interface ToolCallContext { signal: AbortSignal }
export type ToolExecute = (name: string, args: Json, context: ToolCallContext) => unknown | Promise<unknown>;
export interface ToolBridgeLike { execute: ToolExecute }
export interface ToolInterruptHandlerOptions {
  bridge: ToolBridgeLike | ToolExecute;
  session: Session;
  normalizer?: PerceptionAligner;
  artifactStore?: ArtifactStoreLike;
  /** Outputs of at least this many bytes (after redaction) are externalised; default 1024. */
  externalizeThreshold?: number;
}
export interface CallOptions {
  timeoutMs?: number;
  /** The provider's id of the call (`call_…`, `toolu_…`): recorded on the
   * `tool_call` and its outcome, so rendered requests pair them under it. */
  callId?: string;
  /** Gemini's `thoughtSignature` of the call, sent back with it. */
  thoughtSignature?: string;
  /** The reasoning of a reply of calls only, kept with its first call
   * (`recordReply` gives it in the call's `callOptions`). */
  reasoning?: { format: string; items: Json[] };
}
/** A tool call of a reply `session.recordReply` recorded: run it with
 * `handler.call(call.name, call.arguments, call.callOptions)`. */
export interface RepliedToolCall {
  /** The provider's id of the call, when the reply gave one. */
  id?: string;
  name: string;
  arguments: Json;
  /** What `handler.call` records with the call: the provider's id, a thought
   * signature, the reply's reasoning. */
  callOptions: CallOptions;
}
/** What `session.recordReply` recorded and what is left to do. */
export interface RecordedReply {
  /** The reply's text (empty when it only asks for tools). */
  text: string;
  /** The calls to run, in order. */
  toolCalls: RepliedToolCall[];
  /** Calls that cannot run (their arguments are not JSON), already
   * recorded with their `tool_error`, as `runCompiled` records them. */
  refused: ToolEventData[];
  /** The usage the reply carried, as recorded. */
  usage?: ModelUsage;
}
/** What a compile is given besides the session and the budget. */
export interface CompileOptions extends ZonedOptions {
  systemPrompt?: string;
  /** The tools the request offers the model (its `tools` field), counted in
   * SYSTEM as `format` serialises them; when absent, `toolDefinitions` are
   * counted. In either layout. */
  tools?: ToolSpec[];
  /** The format the request is sent in, for counting `tools`; default the
   * plain `{ name, description, parameters }`. */
  format?: MessageFormat | "plain";
  /** Tokens of the budget kept for the reply; default 0. */
  reserveOutput?: number;
  /** The model the request goes to (`"gpt-4.1"`, `"claude-sonnet-4-5"`,
   * `"gemini-2.5-pro"`): images and files are counted by its provider's
   * rule; without it, by `format`'s provider, or the most any charges. */
  model?: string;
  /** The share of the budget held back once the session's recorded usage
   * corrects its count (`session.recordUsage`); default 0.05. */
  usageMargin?: number;
  /** Traces this compile (a `compile_context` span under the active span)
   * instead of the compiler's own `tracer`. */
  tracer?: TracerLike;
}
/** Usage as the providers report it: this shape (and the AI SDK's), Chat
 * Completions' `{ prompt_tokens, completion_tokens, prompt_tokens_details }`,
 * Responses' `{ input_tokens, output_tokens, input_tokens_details }`,
 * Anthropic's `{ input_tokens, cache_creation_input_tokens,
 * cache_read_input_tokens, output_tokens }`, or Gemini's `usageMetadata`. */
export type ProviderUsage =
  | ModelUsage
  | OpenAiChatUsage
  | OpenAiResponsesUsage
  | AnthropicUsage
  | GeminiUsage
  | AiSdkUsage
  | AiSdkProviderUsage
  | LangChainUsage
  | { usage_metadata: LangChainUsage }
  | AgentsSdkUsage;
/** A count as SDKs type it (absent, or `null` where a provider left it out). */
type UsageCount = number | null | undefined;
/** Chat Completions' `usage` (`openai`'s `CompletionUsage`). */
export interface OpenAiChatUsage { prompt_tokens: number; completion_tokens?: UsageCount; prompt_tokens_details?: { cached_tokens?: UsageCount } | null }
/** The Responses API's `usage` (`openai`'s `ResponseUsage`). */
export interface OpenAiResponsesUsage { input_tokens: number; output_tokens?: UsageCount; input_tokens_details?: { cached_tokens?: UsageCount } | null }
/** Anthropic's `usage` (`@anthropic-ai/sdk`'s `Usage`): its `input_tokens` leave out the cache's, added back. */
export interface AnthropicUsage { input_tokens: number; output_tokens?: UsageCount; cache_read_input_tokens: UsageCount; cache_creation_input_tokens?: UsageCount }
/** Gemini's `usageMetadata` (`@google/genai`'s `GenerateContentResponseUsageMetadata`). */
export interface GeminiUsage { promptTokenCount?: UsageCount; cachedContentTokenCount?: UsageCount; candidatesTokenCount?: UsageCount }
/** The `ai` package's `LanguageModelUsage` (a `generateText` result's `usage`). */
export interface AiSdkUsage { inputTokens: UsageCount; outputTokens?: UsageCount; cachedInputTokens?: UsageCount; inputTokenDetails?: { cacheReadTokens?: UsageCount } }
/** A provider's usage as a language model middleware sees it (`LanguageModelV4Usage`). */
export interface AiSdkProviderUsage { inputTokens: { total: UsageCount; cacheRead?: UsageCount }; outputTokens: { total: UsageCount } }
/** LangChain's `UsageMetadata` (an `AIMessage`'s `usage_metadata`). */
export interface LangChainUsage { input_tokens: number; output_tokens?: number; input_token_details?: { cache_read?: number } }
/** The OpenAI Agents SDK's `Usage`: its details one record, or one per request. */
export interface AgentsSdkUsage { inputTokens: number; outputTokens?: number; inputTokensDetails?: { cached_tokens?: UsageCount } | Array<{ cached_tokens?: UsageCount }> }
export interface RecordUsageOptions {
  /** The session's count of the request the usage answers; default the
   * `tokenCount` of the session's latest compile. */
  countedTokens?: number;
}
"#;

pub(crate) use context_compiler_js::args::ImportOptionsArg;

#[wasm_bindgen]
extern "C" {
    /// The `SearchOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "SearchOptions")]
    pub type SearchOptionsArg;
    /// The `ArtifactAttacherOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "ArtifactAttacherOptions")]
    pub type ArtifactAttacherOptionsArg;
    /// The `LookBackOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "LookBackOptions")]
    pub type LookBackOptionsArg;
    /// The `RecordCompactionOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "RecordCompactionOptions")]
    pub type RecordCompactionOptionsArg;
    /// The `RecordUsageOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "RecordUsageOptions")]
    pub type RecordUsageOptionsArg;
    /// The `CompileOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "CompileOptions")]
    pub type CompileOptionsArg;
    /// The `ContextCompilerOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "ContextCompilerOptions")]
    pub type ContextCompilerOptionsArg;
    /// The `EventLogOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "EventLogOptions")]
    pub type EventLogOptionsArg;
    /// The `HistoryRecallOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "HistoryRecallOptions")]
    pub type HistoryRecallOptionsArg;
    /// The `HistorySelectorOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "HistorySelectorOptions")]
    pub type HistorySelectorOptionsArg;
    /// The `MemoryPreloaderOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "MemoryPreloaderOptions")]
    pub type MemoryPreloaderOptionsArg;
    /// The `RecordOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "RecordOptions")]
    pub type RecordOptionsArg;
    /// The `SessionRecordOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "SessionRecordOptions")]
    pub type SessionRecordOptionsArg;
    /// The `SessionOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "SessionOptions")]
    pub type SessionOptionsArg;
    /// The `AttachBusOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "AttachBusOptions")]
    pub type AttachBusOptionsArg;
}

#[wasm_bindgen]
extern "C" {
    /// The `ToolInterruptHandlerOptions` object.
    #[wasm_bindgen(typescript_type = "ToolInterruptHandlerOptions")]
    pub type ToolInterruptHandlerOptionsArg;
    /// The `CallOptions` object.
    #[wasm_bindgen(typescript_type = "CallOptions")]
    pub type CallOptionsArg;
    /// The `ContextWindowOptions` object.
    #[wasm_bindgen(typescript_type = "ContextWindowOptions")]
    pub type ContextWindowOptionsArg;
    /// The `ImportanceOptions` object.
    #[wasm_bindgen(typescript_type = "ImportanceOptions")]
    pub type ImportanceOptionsArg;
    /// The `ToolResultOptions` object.
    #[wasm_bindgen(typescript_type = "ToolResultOptions")]
    pub type ToolResultOptionsArg;
    /// The `CompactorOptions` object.
    #[wasm_bindgen(typescript_type = "CompactorOptions")]
    pub type CompactorOptionsArg;
    /// The `ToMessagesOptions` object.
    #[wasm_bindgen(typescript_type = "ToMessagesOptions")]
    pub type ToMessagesOptionsArg;
    /// The `CheckRequestOptions` object.
    #[wasm_bindgen(typescript_type = "CheckRequestOptions")]
    pub type CheckRequestOptionsArg;
    /// The `AttachMediaOptions` object.
    #[wasm_bindgen(typescript_type = "AttachMediaOptions")]
    pub type AttachMediaOptionsArg;
}
