// The workload every runtime test runs (tests/js/runtimes.test.mjs), the
// same in Node (ESM and CommonJS), Deno and workerd: record a short tool-heavy
// session, compile it with a large output externalised to a KV store over
// that runtime's own storage, read the artifact back verified, save the
// session there and load it again. It returns a summary the test compares
// across runtimes; it throws on the first thing that is not as expected.

/** The tool output that is externalised: ~6 KB of log lines. */
function logText() {
  let out = "";
  for (let i = 0; i < 120; i++) out += `2026-11-24T10:${String(i % 60).padStart(2, "0")}:00Z worker-${i % 7} job ${i} finished\n`;
  return out;
}

/**
 * Runs the workload with `lib` (the package's exports, as this runtime
 * imports them, initialised) over `kv` (`get`, `put`, `delete`, `list`, as
 * `KvArtifactStore` takes) and `chunkBytes` (the storage's value limit).
 */
export async function workload(lib, kv, chunkBytes) {
  const { ArtifactAttacher, ContextCompiler, HistorySelector, KvArtifactStore, Session, contentId } = lib;
  const store = new KvArtifactStore(kv, { chunkBytes });
  const session = new Session({ sessionId: "runtime-workload" });
  const output = logText();
  session.record("user_input", { role: "user", content: "Why did the nightly job fail?" });
  session.record("tool_call", { call_id: "c1", tool_name: "read_logs", arguments: { job: "nightly" } });
  session.record("tool_success", { call_id: "c1", tool_name: "read_logs", output });
  session.record("assistant_output", { role: "assistant", content: "Job 42 ran out of memory." });
  const compiler = new ContextCompiler({ processors: [new HistorySelector(), new ArtifactAttacher(store, { thresholdBytes: 1024 })] });
  const ctx = await compiler.compile(session, 2000, { systemPrompt: "You are a careful agent." });
  if (ctx.tokenCount > 2000) throw new Error(`over budget: ${ctx.tokenCount}`);
  if (ctx.artifactRefs.length !== 1) throw new Error(`expected one artifact, got ${ctx.artifactRefs.length}`);
  const handle = ctx.artifactRefs[0].handle;
  const bytes = await store.retrieve(handle);
  const text = new TextDecoder().decode(bytes);
  if (!text.includes("job 119 finished")) throw new Error("the artifact is not the tool output");
  const id = await contentId(bytes);
  const saved = await store.saveSession(session);
  const loaded = await store.loadSession("runtime-workload");
  if (loaded.exportJson() !== session.exportJson()) throw new Error("the loaded session differs from the saved one");
  const messages = ctx.toMessages();
  ctx.free();
  return {
    events: session.eventLog.length,
    artifactBytes: bytes.length,
    verifiedId: id === handle,
    eventsWritten: saved.eventsWritten,
    loadedEvents: loaded.eventLog.length,
    messages: messages.length,
    lastMessage: messages[messages.length - 1].content,
  };
}
