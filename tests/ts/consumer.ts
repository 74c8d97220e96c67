// A small consumer type-checked with `tsc --noEmit`: the generated types must
// describe the API precisely (no `any` on public methods) for both entries.
import {
  ArtifactAttacher, Compactor, ContextCompiler, HistorySelector, InMemoryBackend,
  MemoryArtifactStore, MemoryPreloader, PerceptionAligner, SchemaRegistry, Session, TokenBudget,
  ToolEvent, ToolEventKind, ToolInterruptHandler, WorkingContext, countTokens, redact,
  type NormalizedOutput, type ValidationResult,
  type ArtifactHandle, type ContextCompilerError, type Message, type SessionEvent,
  type WorkingContextData, KvArtifactStore, IndexedDbArtifactStore, contentId,
  type KeyValueLike, type SaveReport, init, type InitOptions,
} from "agent-context-compiler";
import * as web from "agent-context-compiler/web";
import * as inline from "agent-context-compiler/inline";

export async function run(): Promise<number> {
  const session = new Session({ sessionId: "ts" });
  const event: SessionEvent = session.record("user_input", { text: "hi" }, { tokenEstimate: 3 });
  const id: string = event.eventId;
  const store = new MemoryArtifactStore();
  const handle: ArtifactHandle = await store.store(new Uint8Array([1, 2]), "tool:x", { mimeType: "application/octet-stream" });
  const bytes: Uint8Array | null = await store.retrieve(handle.artifactId);
  const memory = new InMemoryBackend();
  memory.store("k", "v", "core");
  const compiler = new ContextCompiler({
    processors: [
      new HistorySelector({ keepFirst: 1, keepLast: Infinity }),
      new Compactor(),
      new MemoryPreloader(memory, { topK: 3 }),
      new MemoryPreloader(async (query: string) => [{ key: query, content: "x" }]),
      new ArtifactAttacher(store, { thresholdBytes: 2048 }),
      { name: "noop", process: (_s: Session, ctx: WorkingContextData) => ctx },
      async (_s, ctx, budget: number) => ({ ...ctx, budget }),
    ],
  });
  const ctx: WorkingContext = await compiler.compile(session, new TokenBudget(1000), { systemPrompt: "sys" });
  const messages: Message[] = ctx.toMessages();
  try {
    new TokenBudget(0);
  } catch (e) {
    const err = e as ContextCompilerError;
    const code: "INVALID_BUDGET" | string = err.code;
    void code;
  }
  const registry = new SchemaRegistry();
  registry.register("calc", { type: "object" });
  const checked: ValidationResult = registry.validate("calc", { result: 1 });
  const normalized: NormalizedOutput = new PerceptionAligner(registry).normalize("calc", "{}");
  const handler = new ToolInterruptHandler({
    session,
    normalizer: new PerceptionAligner(registry),
    artifactStore: store,
    bridge: async (name: string, _args, { signal }) => (signal.aborted ? "" : name),
  });
  const toolEvent: ToolEvent = await handler.call("calc", { x: 1 }, { timeoutMs: 1000 });
  const kind: "tool_call" | "tool_success" | "tool_error" | "tool_timeout" = toolEvent.kind;
  const error: string | null = toolEvent.error;
  const success: typeof ToolEventKind.SUCCESS = "tool_success";
  const findings = redact("x").findings.length;
  void checked; void normalized; void kind; void error; void success; void findings;
  // @ts-expect-error timeoutMs is a number
  await handler.call("calc", {}, { timeoutMs: "1s" });
  // @ts-expect-error tokenEstimate is a number
  session.record("user_input", "x", { tokenEstimate: "3" });
  // @ts-expect-error data must be JSON
  session.record("user_input", () => 1);
  // @ts-expect-error unknown option
  new HistorySelector({ keepFrist: 1 });
  const map = new Map<string, Uint8Array>();
  const kvLike: KeyValueLike = {
    get: async (k) => map.get(k) ?? null,
    put: async (k, v) => void map.set(k, v),
    delete: async (k) => void map.delete(k),
    list: async ({ prefix }) => [...map.keys()].filter((k) => k.startsWith(prefix)),
  };
  const kvStore = new KvArtifactStore(kvLike, { chunkBytes: 65536, prefix: "app/", timeoutMs: 1000 });
  const report: SaveReport = await kvStore.saveSession(session);
  const loaded: Session | null = await kvStore.loadSession("ts", { tokenCounter: "words" });
  const sessions: string[] = await kvStore.listSessions();
  const idb: IndexedDbArtifactStore = await IndexedDbArtifactStore.open({ databaseName: "x", durability: "strict" });
  const idbHandle: ArtifactHandle = await idb.store("x", "s");
  new ArtifactAttacher(kvStore);
  new ToolInterruptHandler({ bridge: async () => "x", session, artifactStore: idb });
  const hex: string = contentId("abc");
  void report; void loaded; void sessions; void idbHandle; void hex;
  // @ts-expect-error durability is one of three strings
  await IndexedDbArtifactStore.open({ durability: "eventual" });
  // @ts-expect-error a KV needs get/put/delete
  new KvArtifactStore({ get: async () => null });
  await web.init();
  await web.init({ modules: ["stores"] });
  await web.init({ wasm: { main: new URL("https://example.com/context_compiler_bg.wasm"), schemas: "/schema.wasm" } });
  web.initSync({ main: new Uint8Array() });
  web.initSync({ main: new Uint8Array(), bus: new Uint8Array(), stores: new Uint8Array(), schemas: new Uint8Array() });
  // @ts-expect-error the optional modules are "bus", "stores" and "schemas"
  await web.init({ modules: ["tokenizer"] });
  // @ts-expect-error init takes an options object, not a module's URL
  await web.init("https://example.com/context_compiler_bg.wasm");
  // @ts-expect-error initSync takes the modules by name, not one module's bytes
  web.initSync(new Uint8Array());
  await inline.init();
  await inline.init({ modules: ["bus", "schemas"] });
  // @ts-expect-error the inline entry's modules are inside it
  await inline.init({ wasm: { main: "/x.wasm" } });
  const bus = new inline.EventBus();
  void bus;
  // The main entry is the Node one under node16/nodenext and the web one
  // under bundler resolution: both take the same options.
  const options: InitOptions = { modules: [] };
  await init(options);
  return messages.length + countTokens(id) + (bytes?.length ?? 0) + ctx.tokenCount;
}
