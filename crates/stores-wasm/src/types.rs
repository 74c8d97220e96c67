//! The stores module's TypeScript: the host objects its stores take and
//! their options, and the main module's types it names.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_STORES: &'static str = r#"
import type { ArtifactHandle, ImportOptions, MemoryEntry, MemoryFilter, SaveReport, Session, StoreOptions } from "./context_compiler.js";
/** A key-value store for `KvArtifactStore`. `get` resolves to bytes, a string (read as UTF-8), or
 * `null`/`undefined` when absent; `list` (optional) resolves to the keys starting with `prefix`. */
export interface KeyValueLike {
  get(key: string): Promise<Uint8Array | ArrayBuffer | string | null | undefined> | Uint8Array | ArrayBuffer | string | null | undefined;
  put(key: string, value: Uint8Array): Promise<unknown> | unknown;
  delete(key: string): Promise<unknown> | unknown;
  list?(options: { prefix: string }): Promise<Array<string | { key: string } | { name: string }>> | Array<string | { key: string } | { name: string }>;
  /** Sets `key` to `value` only if it holds exactly the bytes of `expected` (is absent, for
   * `null`), in one atomic step; resolves to whether it wrote. With it several writers may
   * save one session; without it the store is single-writer. */
  putIf?(key: string, value: Uint8Array, expected: Uint8Array | null): Promise<boolean> | boolean;
  /** Sets `key` to `value` for `ttlMs` by the store's own clock (Redis `PX`, a KV's TTL):
   * after that `get` finds nothing. With it (and `putIf`) a sync that lost repeatedly takes
   * the session's lease; without it the store keeps none. */
  putExpiring?(key: string, value: Uint8Array, ttlMs: number): Promise<unknown> | unknown;
}
/** A file system for `FsArtifactStore`, on paths relative to the store's
 * directory with `/` separators. `write` must be atomic (write a temporary
 * file beside `path`, then rename it over `path`) and create missing
 * directories; `read` resolves to `null` for a missing file; `list(dir)` to
 * every file under `dir` at any depth (relative paths; `[]` when absent). */
export interface FileSystemLike {
  read(path: string): Promise<Uint8Array | ArrayBuffer | string | null | undefined>;
  write(path: string, bytes: Uint8Array): Promise<unknown>;
  remove(path: string): Promise<unknown>;
  list(dir: string): Promise<string[]>;
  /** Creates `path` holding `bytes` only when no file is there, atomically (a temporary file,
   * synced, then hard-linked to `path`); resolves to `false` when one is. With it several
   * processes may save one session; without it the store is single-writer. */
  createNew?(path: string, bytes: Uint8Array): Promise<boolean>;
  /** How long ago the file at `path` was written, in ms by its modification time, or `null`
   * when there is none. With it (and `createNew`) a sync that lost repeatedly takes the
   * session's lease, in a file that expires by that time. */
  ageMs?(path: string): Promise<number | null>;
}
/** A value bound to or read from SQLite. */
export type SqlValueLike = null | number | bigint | string | Uint8Array | ArrayBuffer;
/** A SQLite connection for `SqliteArtifactStore`: `query` resolves to the rows
 * (arrays, or objects whose values are in `SELECT` order); `batch` runs the
 * statements as one transaction. `sqlConnection(db)` makes one. */
export interface SqlConnectionLike {
  query(sql: string, params: SqlValueLike[]): Promise<Array<SqlValueLike[] | Record<string, SqlValueLike>>> | Array<SqlValueLike[] | Record<string, SqlValueLike>>;
  batch(statements: Array<{ sql: string; params: SqlValueLike[] }>): Promise<unknown> | unknown;
}
export interface FsStoreOptions {
  /** The store's directory (created on first write). */
  baseDir: string;
  /** The file system; by default `node:fs/promises` in Node and Deno. */
  files?: FileSystemLike;
  /** The largest file written; larger artifacts are split into chunk files. Default 64 MiB, at least 1024. */
  chunkBytes?: number;
  /** Put before every file name under `baseDir` (several stores in one directory); default "". */
  prefix?: string;
  /** How long one file operation may take before `STORE_TIMEOUT`; default 30000, `Infinity` waits forever. */
  timeoutMs?: number;
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
"#;

#[wasm_bindgen]
extern "C" {
    /// The `FsStoreOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "FsStoreOptions")]
    pub type FsStoreOptionsArg;
    /// The `KvStoreOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "KvStoreOptions")]
    pub type KvStoreOptionsArg;
    /// The `IndexedDbStoreOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "IndexedDbStoreOptions")]
    pub type IndexedDbStoreOptionsArg;
}
