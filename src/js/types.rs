//! TypeScript declarations for the plain objects the classes take and return.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Stable error codes carried by `error.code`. */
export type ErrorCode =
  | "INVALID_BUDGET" | "INVALID_TOKEN_COUNT" | "INVALID_ARGUMENT" | "NOT_SERIALIZABLE"
  | "INVALID_SESSION_IMPORT" | "INVALID_SCHEMA" | "ARTIFACT_INTEGRITY" | "ARTIFACT_INCOMPLETE"
  | "STORE_FAILED" | "STORE_QUOTA_EXCEEDED" | "STORE_BLOCKED" | "STORE_CLOSED" | "STORE_UNAVAILABLE"
  | "STORE_UNSUPPORTED" | "STORE_INVALID_VALUE" | "STORE_CORRUPT" | "STORE_TIMEOUT" | "MEMORY_FAILED"
  | "PROCESSOR_FAILED" | "BUDGET_TOO_SMALL" | "SESSION_BUSY" | "NOT_INITIALIZED";

/** Every error this library throws or rejects with. */
export interface ContextCompilerError extends Error {
  name: "ContextCompilerError";
  code: ErrorCode;
}

/** Which built-in token counter to use: calibrated on o200k_base, or the seed's words × 1.3. */
export type TokenCounterName = "default" | "words";

export interface SessionOptions { sessionId?: string; tokenCounter?: TokenCounterName }
export interface EventLogOptions { tokenCounter?: TokenCounterName }
export interface ImportOptions { tokenCounter?: TokenCounterName }
/** `tokenEstimate`: a non-negative integer; computed from the content when absent. */
export interface RecordOptions { tokenEstimate?: number }

/** Event kinds the compiler understands; any other non-empty string is allowed too. */
export type SessionEventKind =
  | "user_input" | "assistant_output" | "phase_result" | "memory_hit" | "tool_call"
  | "tool_success" | "tool_error" | "tool_timeout" | "artifact_stored" | "guard_decision"
  | (string & {});

export interface SessionEvent {
  /** Time-sortable: `{ms:012x}-{sequence:06x}{random:06x}`. */
  eventId: string;
  /** Milliseconds since the epoch; never decreases along a log. */
  timestamp: number;
  kind: SessionEventKind;
  data: Json;
  tokenEstimate: number;
}

export interface EvidenceEntry { timestamp: number; phase: string; kind: string; data: Json }
export interface EvidencePack { sessionId: string; entries: EvidenceEntry[] }

export interface HistoryMessage { role: string; content: string; eventId?: string }
export interface MemoryHit { key: string; content: string; category?: string }
export interface ArtifactRef { handle: string; summary: string; sizeBytes: number; source?: string; eventId?: string }
export interface ToolResult { tool: string; result: string; eventId?: string }
export interface DroppedItem {
  section: "systemPrompt" | "history" | "memoryHits" | "artifactRefs" | "toolResults";
  action: "dropped" | "truncated";
  eventId?: string;
  tokensRemoved: number;
}
export interface Message { role: string; content: string }

export interface WorkingContextInit {
  systemPrompt: string;
  history?: HistoryMessage[];
  memoryHits?: MemoryHit[];
  artifactRefs?: ArtifactRef[];
  toolResults?: ToolResult[];
  tokenCount?: number;
  budget?: number;
}
/** The plain-object form of a `WorkingContext`, as custom processors get it. */
export interface WorkingContextData {
  systemPrompt: string;
  history: HistoryMessage[];
  memoryHits: MemoryHit[];
  artifactRefs: ArtifactRef[];
  toolResults: ToolResult[];
  tokenCount: number;
  budget: number;
  dropped: DroppedItem[];
}

export interface ArtifactHandle {
  /** SHA-256 of the content, lower-case hex. */
  artifactId: string;
  summary: string;
  sizeBytes: number;
  mimeType: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
  source: string;
  sessionId?: string;
}
export interface StoreOptions { mimeType?: string; sessionId?: string }
/** Any of the library's artifact stores. */
export type ArtifactStoreLike = MemoryArtifactStore | KvArtifactStore | IndexedDbArtifactStore;
/** What one `saveSession` wrote. */
export interface SaveReport {
  /** Events written by this save (0 when the store was already up to date). */
  eventsWritten: number;
  /** Whether the whole log was rewritten rather than the new events appended. */
  rewritten: boolean;
}
/** A key-value store for `KvArtifactStore`. `get` resolves to bytes, a string (read as UTF-8), or
 * `null`/`undefined` when absent; `list` (optional) resolves to the keys starting with `prefix`. */
export interface KeyValueLike {
  get(key: string): Promise<Uint8Array | ArrayBuffer | string | null | undefined> | Uint8Array | ArrayBuffer | string | null | undefined;
  put(key: string, value: Uint8Array): Promise<unknown> | unknown;
  delete(key: string): Promise<unknown> | unknown;
  list?(options: { prefix: string }): Promise<Array<string | { key: string } | { name: string }>> | Array<string | { key: string } | { name: string }>;
}
export interface KvStoreOptions {
  /** The largest value written, header included; default 65536 (Deno KV's limit), at least 1024. */
  chunkBytes?: number;
  /** Put before every key; default "". */
  prefix?: string;
  /** How long one KV operation may take before `STORE_TIMEOUT`; default 30000, `Infinity` waits forever. */
  timeoutMs?: number;
}
export interface IndexedDbStoreOptions {
  /** Default "agent-context-compiler". */
  databaseName?: string;
  /** The object store of artifacts; default "artifacts". */
  storeName?: string;
  /** The object store of saved sessions; default "sessions" (events go to "<name>.events"). */
  sessionStoreName?: string;
  /** Transaction durability of writes; default "default". */
  durability?: "default" | "strict" | "relaxed";
}
export interface StoredArtifact { handle: ArtifactHandle; sessions: string[]; content: Uint8Array }

export interface MemoryEntry { key: string; content: string; category?: string }
export interface MemoryStoreLike { recall(query: string, limit: number): MemoryEntry[] | Promise<MemoryEntry[]> }
export type MemoryRecallFunction = (query: string, limit: number) => MemoryEntry[] | Promise<MemoryEntry[]>;

export interface HistorySelectorOptions { keepFirst?: number; keepLast?: number }
export interface MemoryPreloaderOptions { topK?: number }
export interface ArtifactAttacherOptions { thresholdBytes?: number }

/** A processor written in JS: gets a plain-object context, returns one (or a WorkingContext). */
export type ProcessorFunction = (session: Session, ctx: WorkingContextData, budget: number) =>
  WorkingContextInit | WorkingContext | Promise<WorkingContextInit | WorkingContext>;
export interface CustomProcessor { name?: string; process: ProcessorFunction }
export type Processor = HistorySelector | Compactor | MemoryPreloader | ArtifactAttacher | CustomProcessor | ProcessorFunction;

export interface ContextCompilerOptions { processors?: Processor[] }

export interface Finding { rule: string; path?: string; start: number; end: number }
export interface Redaction { text: string; findings: Finding[] }
export interface SchemaError { instancePath: string; schemaPath: string; message: string }
export interface ValidationResult { valid: boolean; errors: SchemaError[] }
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
export interface CallOptions { timeoutMs?: number }
export interface CompileOptions { systemPrompt?: string }
"#;

#[wasm_bindgen]
extern "C" {
    /// The `ArtifactAttacherOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "ArtifactAttacherOptions")]
    pub type ArtifactAttacherOptionsArg;
    /// The `CompileOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "CompileOptions")]
    pub type CompileOptionsArg;
    /// The `ContextCompilerOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "ContextCompilerOptions")]
    pub type ContextCompilerOptionsArg;
    /// The `EventLogOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "EventLogOptions")]
    pub type EventLogOptionsArg;
    /// The `HistorySelectorOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "HistorySelectorOptions")]
    pub type HistorySelectorOptionsArg;
    /// The `ImportOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "ImportOptions")]
    pub type ImportOptionsArg;
    /// The `MemoryPreloaderOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "MemoryPreloaderOptions")]
    pub type MemoryPreloaderOptionsArg;
    /// The `RecordOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "RecordOptions")]
    pub type RecordOptionsArg;
    /// The `SessionOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "SessionOptions")]
    pub type SessionOptionsArg;
    /// The `StoreOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "StoreOptions")]
    pub type StoreOptionsArg;
    /// The `KvStoreOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "KvStoreOptions")]
    pub type KvStoreOptionsArg;
    /// The `IndexedDbStoreOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "IndexedDbStoreOptions")]
    pub type IndexedDbStoreOptionsArg;
}

#[wasm_bindgen]
extern "C" {
    /// The `ToolInterruptHandlerOptions` object.
    #[wasm_bindgen(typescript_type = "ToolInterruptHandlerOptions")]
    pub type ToolInterruptHandlerOptionsArg;
    /// The `CallOptions` object.
    #[wasm_bindgen(typescript_type = "CallOptions")]
    pub type CallOptionsArg;
}
