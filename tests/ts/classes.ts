// A TypeScript consumer of the packed package: every class used as the
// README shows, and each given a wrong argument type under
// `@ts-expect-error` (so a typing that lets the mistake through fails the
// compile as an unused directive). Compiled with the other consumers by
// tests/js/typescript.test.mjs under several module resolutions, with and
// without the DOM lib.
import {
  ArtifactAttacher,
  Compactor,
  ContextCompiler,
  ContextWindow,
  EpisodeSummarizer,
  EventBus,
  EventLog,
  FactExtractor,
  FsArtifactStore,
  HistorySelector,
  InMemoryBackend,
  IndexedDbArtifactStore,
  KvArtifactStore,
  MemoryArtifactStore,
  MemoryPreloader,
  PerceptionAligner,
  SchemaRegistry,
  Session,
  SessionTimeoutMonitor,
  SleepHandler,
  SqliteArtifactStore,
  PostgresArtifactStore,
  TokenBudget,
  ToolEvent,
  ToolInterruptHandler,
  WorkingContext,
  contentId,
  countTokens,
  init,
  initSync,
  redact,
  sqlConnection,
  pgConnection,
  redisKv,
  type ErrorCode,
  type SyncReport,
  type KeyValueLike,
  type Message,
  type SessionEvent,
} from "agent-context-compiler";
import { loadTokenizer, type Tokenizer } from "agent-context-compiler/tokenizers";
import wasm from "agent-context-compiler/context_compiler.wasm";

export async function useEveryClass(bytes: Uint8Array): Promise<number> {
  await init();
  initSync({ main: bytes });
  const session = new Session({ sessionId: "ts" });
  const event: SessionEvent = session.record("user_input", "hello");
  // @ts-expect-error a session id is a string
  new Session({ sessionId: 42 });

  const store = new MemoryArtifactStore();
  // @ts-expect-error content is bytes or a string
  await store.store(123, "tool");
  const handle = await store.store("output", "tool", { sessionId: "ts" });

  const map = new Map<string, Uint8Array>();
  const kv: KeyValueLike = { get: (k) => map.get(k), put: (k, v) => void map.set(k, v), delete: (k) => map.delete(k) };
  const kvStore = new KvArtifactStore(kv, { chunkBytes: 4096 });
  // @ts-expect-error chunkBytes is a number
  new KvArtifactStore(kv, { chunkBytes: "4k" });
  await kvStore.saveSession(session);

  const files = new FsArtifactStore({ baseDir: "agent-data", chunkBytes: 1 << 20 });
  await files.saveSession(session);
  // @ts-expect-error the store needs its directory
  new FsArtifactStore({ chunkBytes: 1024 });
  // @ts-expect-error files is a file system, not a path
  new FsArtifactStore({ baseDir: "d", files: "/tmp" });

  const sqlite = new SqliteArtifactStore({ query: async () => [], batch: async () => undefined });
  await sqlite.saveSession(session);
  const wrapped = new SqliteArtifactStore(sqlConnection({ query: () => [[1, "a"]], batch: () => undefined }));
  void wrapped;
  // @ts-expect-error a connection has query and batch
  new SqliteArtifactStore({ query: async () => [] });

  const postgres = new PostgresArtifactStore(pgConnection({ query: async () => ({ rows: [] }) }));
  const synced: SyncReport = await session.sync(postgres, { maxTries: 3, baseDelayMs: 5 });
  void synced.merged;
  await session.sync(new KvArtifactStore(redisKv({})));
  // @ts-expect-error maxTries is a number
  await session.sync(postgres, { maxTries: "3" });
  // @ts-expect-error sync takes a store
  await session.sync("postgres://");

  const opened: Promise<IndexedDbArtifactStore> = IndexedDbArtifactStore.open({ databaseName: "ts" });
  // @ts-expect-error durability is one of three words
  IndexedDbArtifactStore.open({ durability: "eventual" });
  void opened;

  const compiler = new ContextCompiler({
    layout: "zoned",
    processors: [new HistorySelector({ keepLast: 4 }), new Compactor(), new ArtifactAttacher(store, { thresholdBytes: 512 })],
  });
  // @ts-expect-error a layout is "single-system" or "zoned"
  new ContextCompiler({ layout: "stacked" });
  // @ts-expect-error keepLast is a number
  new HistorySelector({ keepLast: "4" });
  // @ts-expect-error target is a number
  new Compactor({ target: "half" });
  // @ts-expect-error the store comes first
  new ArtifactAttacher({ thresholdBytes: 512 });

  const memory = new InMemoryBackend();
  memory.store("k", "the user likes tea");
  // @ts-expect-error content is a string
  memory.store("k", 7);
  compiler.addProcessor(new MemoryPreloader(memory, { topK: 3 }));
  // @ts-expect-error topK is a number
  new MemoryPreloader(memory, { topK: "3" });

  const ctx: WorkingContext = await compiler.compile(session, new TokenBudget(1000));
  // @ts-expect-error a budget is a number or a TokenBudget
  await compiler.compile(session, "1000");
  // @ts-expect-error maxTokens is a number
  new TokenBudget("1000");
  const messages: Message[] = ctx.toMessages();
  // @ts-expect-error a format is one of the known names
  ctx.toMessages({ format: "bard" });
  // @ts-expect-error an init has a budget and a system prompt
  new WorkingContext({ budget: "x" });

  const window = new ContextWindow({ maxContextTokens: 8000 });
  window.appendMessage("user", "hi");
  // @ts-expect-error content is a string
  window.appendMessage("user", { text: "hi" });

  const registry = new SchemaRegistry();
  registry.register("search", { type: "object" });
  const aligner = new PerceptionAligner(registry);
  const normalized = aligner.normalize("search", "{}");
  // @ts-expect-error a tool name is a string
  aligner.normalize(7, "{}");

  const tools = new ToolInterruptHandler({ bridge: async (name, args) => ({ name, args }), session, normalizer: aligner, artifactStore: store });
  const called: ToolEvent = await tools.call("search", { q: "x" }, { timeoutMs: 1000 });
  // @ts-expect-error a tool name is a string
  await tools.call(7, {});
  // @ts-expect-error a kind is one of four names
  ToolEvent.create({ kind: "tool_started", toolName: "x" });

  const bus = new EventBus({ maxQueue: 100 });
  // @ts-expect-error maxQueue is a number
  new EventBus({ maxQueue: "100" });
  const monitor = new SessionTimeoutMonitor({ bus, sessionIdleTimeoutMs: 60000 });
  // @ts-expect-error the monitor needs a bus
  new SessionTimeoutMonitor({ sessionIdleTimeoutMs: 60000 });
  const summarizer = new EpisodeSummarizer({ bus, llm: async () => "summary" });
  // @ts-expect-error the summariser needs a model
  new EpisodeSummarizer({ bus });
  const extractor = new FactExtractor({ bus, llm: async () => "[]", memory });
  // @ts-expect-error memory is a store, not a string
  new FactExtractor({ bus, llm: async () => "[]", memory: "facts" });
  const sleeper = new SleepHandler({ bus, llm: async () => "[]", memory });
  // @ts-expect-error the sleep handler needs a bus
  new SleepHandler({ llm: async () => "[]", memory });
  summarizer.detach();
  extractor.detach();
  sleeper.detach();
  monitor.stop();

  const log = new EventLog();
  // @ts-expect-error kinds are strings
  log.filter([1, 2]);

  const exact: Tokenizer = await loadTokenizer("o200k_base");
  // @ts-expect-error only the shipped encodings
  await loadTokenizer("p50k_base");
  // @ts-expect-error text is a string
  countTokens(42);

  const code: ErrorCode = "INVALID_ARGUMENT";
  // @ts-expect-error codes are a closed set
  const wrong: ErrorCode = "OOPS";
  void wrong;
  void wasm;
  return (
    event.tokenEstimate + handle.sizeBytes + messages.length + normalized.summaryConcise.length + called.latencyMs +
    exact.count("hi") + contentId("x").length + redact("x").findings.length + code.length + (await kvStore.listSessions()).length
  );
}
