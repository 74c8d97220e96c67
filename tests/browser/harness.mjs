// The page side of the browser tests: runs the store conformance suite and
// the IndexedDB fault scenarios, exposed as globalThis.harness for the Node
// test (tests/js/browser.test.mjs) to call through Playwright.
import * as lib from "../../js/web.js";
import { runStoreSuite } from "../conformance/store_suite.mjs";
import { kvBackend, memoryBackend } from "../conformance/kv_adapters.mjs";
import { deleteDatabase, indexedDbBackend, rawOpen } from "./idb_backend.mjs";
import { syncedLog, syncingWriter, twoWriters } from "../conformance/writers.mjs";

// The main module only: each test below loads the optional module it uses.
await lib.init({ modules: [] });

function codeOf(promise) {
  return promise.then(
    () => "resolved",
    (e) => e?.code ?? `not a coded error: ${e}`,
  );
}

function randomBytes(n) {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i += 65536) crypto.getRandomValues(out.subarray(i, Math.min(n, i + 65536)));
  return out;
}

/** Incompressible text (IndexedDB compresses what it stores). */
function randomText(n) {
  const bytes = randomBytes(n);
  let out = "";
  for (let i = 0; i < n; i += 8192) {
    out += String.fromCharCode(...Array.from(bytes.subarray(i, i + 8192), (b) => 33 + (b % 90)));
  }
  return out;
}

const backends = {
  indexeddb: () => indexedDbBackend(lib, "page"),
  memory: () => memoryBackend(lib),
  kv: () => kvBackend(lib, { maxValueBytes: 65536 }),
};

/** The `.wasm` files the page has fetched, by file name. */
const fetchedWasm = () =>
  performance
    .getEntriesByType("resource")
    .map((e) => e.name.split("/").pop())
    .filter((n) => n.endsWith(".wasm"))
    .sort();

/** Opens an IndexedDB store, loading the stores module first (once). */
async function openIdb(options) {
  await lib.init({ modules: ["stores"] });
  return lib.IndexedDbArtifactStore.open(options);
}

globalThis.harness = {
  /**
   * Two stores over one IndexedDB database: a stale save rejects whole and
   * racing writers keep every acknowledged event (tests/conformance/writers.mjs).
   */
  async twoWriters() {
    await deleteDatabase("two-writers");
    const a = await openIdb({ databaseName: "two-writers" });
    const b = await openIdb({ databaseName: "two-writers" });
    try {
      return await twoWriters(lib, [a, b], { count: 10 });
    } catch (e) {
      return { error: String(e?.message ?? e) };
    } finally {
      a.close();
      b.close();
    }
  },
  /**
   * One tab's writer of a session shared through IndexedDB database `name`:
   * records `count` turns and syncs after each (tests/js/browser.test.mjs
   * runs one in each of two tabs at once).
   */
  async syncingTab(name, tab, count) {
    const store = await openIdb({ databaseName: name });
    try {
      return await syncingWriter(lib, store, "shared", tab, count);
    } catch (e) {
      return { error: `${e?.code ?? ""} ${e?.message ?? e}` };
    } finally {
      store.close();
    }
  },
  /** What database `name` holds of the session the tabs shared. */
  async syncedLog(name) {
    const store = await openIdb({ databaseName: name });
    try {
      return await syncedLog(store, "shared");
    } finally {
      store.close();
    }
  },
  /**
   * The persistent stores: a module of their own, fetched only when
   * init names "stores"; a store of the stores module keeps a main-module session
   * and is an attacher's store.
   */
  async stores() {
    const before = fetchedWasm();
    let beforeInit = null;
    try {
      await lib.IndexedDbArtifactStore.open({ databaseName: "stores-module" });
    } catch (e) {
      beforeInit = { code: e.code, message: e.message };
    }
    await lib.init({ modules: ["stores"] });
    const store = await lib.IndexedDbArtifactStore.open({ databaseName: "stores-module" });
    const session = new lib.Session({ sessionId: "crossing" });
    session.record("user_input", "kept across modules");
    const report = await store.saveSession(session);
    const loaded = await store.loadSession("crossing");
    const handle = await store.store("x".repeat(5000), "tool:test");
    const compiler = new lib.ContextCompiler({
      processors: [new lib.HistorySelector(), new lib.ArtifactAttacher(store, { thresholdBytes: 1024 })],
    });
    session.record("tool_success", { tool: "fetch", result: "y".repeat(3000) });
    const ctx = await compiler.compile(session, 500);
    const attached = await store.retrieve(ctx.artifactRefs[0].handle);
    return {
      before,
      beforeInit,
      after: fetchedWasm(),
      report,
      loadedEvents: loaded.eventLog.length,
      loadedIsSession: loaded instanceof lib.Session,
      handleId: handle.artifactId,
      attachedBytes: attached?.length ?? null,
    };
  },

  /**
   * The event bus: a module of its own, fetched only when init names "bus"; a session
   * of the main module feeds a bus and a monitor of the bus module.
   */
  async bus() {
    const before = fetchedWasm();
    let beforeInit = null;
    try {
      new lib.EventBus();
    } catch (e) {
      beforeInit = { code: e.code, message: e.message };
    }
    await lib.init({ modules: ["bus"] });
    const bus = new lib.EventBus();
    const seen = [];
    bus.on("message_received", (e) => {
      seen.push([e.type, e.sessionId, e.data.text, e.agentId]);
    });
    bus.start();
    const session = new lib.Session({ sessionId: "fed" });
    session.attachBus(bus, { agentId: "browser" });
    session.record("user_input", "hello from the page");
    await bus.stop();
    return { before, beforeInit, after: fetchedWasm(), seen };
  },

  /** JSON Schema validation: a second module, fetched only when init names "schemas". */
  async schemas() {
    const before = fetchedWasm();
    let beforeInit = null;
    try {
      new lib.SchemaRegistry();
    } catch (e) {
      beforeInit = { code: e.code, message: e.message };
    }
    await lib.init({ modules: ["schemas"] });
    const registry = new lib.SchemaRegistry();
    registry.register("calc", { type: "object", properties: { result: { type: "number" } }, required: ["result"] });
    const aligner = new lib.PerceptionAligner(registry);
    const bad = aligner.normalize("calc", '{"result": "x"}');
    let invalid = null;
    try {
      registry.register("broken", { type: 5 });
    } catch (e) {
      invalid = e.code;
    }
    return {
      before,
      beforeInit,
      after: fetchedWasm(),
      valid: registry.validate("calc", { result: 1 }).valid,
      badPath: bad.validationErrors.map((e) => e.instancePath),
      invalid,
    };
  },
  async suite(name) {
    await lib.init({ modules: ["stores"] });
    return runStoreSuite(lib, backends[name]());
  },

  workerSuite() {
    return new Promise((resolve, reject) => {
      const worker = new Worker(new URL("./worker.mjs", import.meta.url), { type: "module" });
      worker.onmessage = (e) => {
        worker.terminate();
        if (e.data.error) reject(new Error(e.data.error));
        else resolve(e.data);
      };
      worker.onerror = (e) => reject(new Error(`worker failed: ${e.message}`));
    });
  },

  /** Stores more than the origin's quota (set by the test through CDP). */
  async quota(bytes) {
    const databaseName = "quota";
    const store = await openIdb({ databaseName });
    const content = randomBytes(bytes);
    const code = await codeOf(store.store(content, "big", { sessionId: "q" }));
    const existsAfter = await store.exists(lib.contentId(content));
    const listedAfter = (await store.listHandles("q")).length;
    const small = await store.store("still works", "small");
    const smallBack = new TextDecoder().decode(await store.retrieve(small.artifactId));
    const s = new lib.Session({ sessionId: "quota-session" });
    for (let i = 0; i < 40; i++) s.record("user_input", `turn ${i}`);
    await store.saveSession(s);
    s.record("tool_success", { dump: randomText(bytes) });
    const sessionCode = await codeOf(store.saveSession(s));
    const reloaded = await store.loadSession("quota-session");
    const result = {
      code,
      existsAfter,
      listedAfter,
      smallBack,
      sessionCode,
      savedEventsAfterFailure: reloaded.eventLog.length,
    };
    store.close();
    await deleteDatabase(databaseName);
    return result;
  },

  /** An upgrade blocked by a connection that keeps the old version open. */
  async blocked() {
    const databaseName = "blocked";
    const raw = await rawOpen(databaseName); // version 1, none of our stores
    const code = await codeOf(openIdb({ databaseName }));
    raw.close();
    const store = await openIdb({ databaseName });
    const h = await store.store("after unblocking", "s");
    const ok = (await store.retrieve(h.artifactId)) !== null;
    store.close();
    await deleteDatabase(databaseName);
    return { code, ok };
  },

  /** The database deleted under an open store, and close(). */
  async closed() {
    const databaseName = "closed";
    const store = await openIdb({ databaseName });
    await store.store("before", "s");
    await deleteDatabase(databaseName); // the store yields its connection
    const afterDelete = await codeOf(store.store("after", "s"));
    const listAfterDelete = await codeOf(store.listSessions());
    const other = await openIdb({ databaseName: "closed-2" });
    other.close();
    const afterClose = await codeOf(other.retrieve(lib.contentId("x")));
    await deleteDatabase("closed-2");
    return { afterDelete, listAfterDelete, afterClose };
  },

  /** Data that does not have the record shape is STORE_CORRUPT. */
  async hostileRecord() {
    const databaseName = "hostile";
    const store = await openIdb({ databaseName });
    const h = await store.store("soon hostile", "s");
    const db = await rawOpen(databaseName);
    await new Promise((resolve, reject) => {
      const tx = db.transaction("artifacts", "readwrite");
      tx.objectStore("artifacts").put({ handle: 42, content: "not bytes" }, h.artifactId);
      tx.oncomplete = resolve;
      tx.onabort = () => reject(tx.error);
    });
    db.close();
    const retrieve = await codeOf(store.retrieve(h.artifactId));
    const list = await codeOf(store.listHandles());
    store.close();
    await deleteDatabase(databaseName);
    return { retrieve, list };
  },

  /** Writes with durability "strict" round-trip, and a bad option is refused. */
  async strict() {
    const databaseName = "strict";
    const store = await openIdb({ databaseName, durability: "strict" });
    const h = await store.store("durable", "s");
    const back = new TextDecoder().decode(await store.retrieve(h.artifactId));
    const s = new lib.Session({ sessionId: "strict" });
    s.record("user_input", "hi");
    const report = await store.saveSession(s);
    store.close();
    await deleteDatabase(databaseName);
    const bad = await codeOf(openIdb({ durability: "eventual" }));
    return { back, report, bad };
  },

  /** Before a reload: a session and an artifact saved in custom-named stores. */
  async saveBeforeReload() {
    const store = await openIdb({
      databaseName: "reload",
      storeName: "blobs",
      sessionStoreName: "chats",
    });
    const s = new lib.Session({ sessionId: "conversation" });
    s.record("user_input", "What is in the log?");
    const h = await store.store("a large log\n".repeat(1000), "tool:read", { sessionId: "conversation" });
    s.record("tool_success", { tool: "read", artifact: h.artifactId });
    await store.saveSession(s);
    s.record("assistant_output", "It repeats one line.");
    const second = await store.saveSession(s);
    store.close();
    return { exported: s.exportJson(), artifactId: h.artifactId, second };
  },

  /** After a reload: everything comes back. */
  async loadAfterReload(artifactId) {
    const store = await openIdb({
      databaseName: "reload",
      storeName: "blobs",
      sessionStoreName: "chats",
    });
    const s = await store.loadSession("conversation");
    const content = new TextDecoder().decode(await store.retrieve(artifactId));
    const handles = await store.listHandles("conversation");
    const sessions = await store.listSessions();
    store.close();
    await deleteDatabase("reload");
    return { exported: s?.exportJson(), contentLength: content.length, handles: handles.length, sessions };
  },

  /** Session 1 of the memory loop: a fact extracted into memory persisted in IndexedDB. */
  async memoryBeforeReload() {
    const store = await openIdb({ databaseName: "memory-loop" });
    const memory = await store.openMemory("memory");
    await lib.init({ modules: ["bus"] });
    const bus = new lib.EventBus();
    new lib.FactExtractor({
      bus,
      memory,
      llm: async () => JSON.stringify([{ subject: "deploy", content: "Production deploys must go to eu-west-3 only", category: "rule", confidence: 0.95 }]),
    });
    bus.start();
    await bus.emit({ type: "episode_summarized", agentId: "nous", sessionId: "s-1", data: { episode_id: "ep-1", summary: { summary: "The user set the deploy region." } } });
    await bus.stop();
    const size = memory.size;
    store.close();
    return { size };
  },

  /** Session 2, after a reload: the fact reaches the compiled context. */
  async memoryAfterReload() {
    const store = await openIdb({ databaseName: "memory-loop" });
    const memory = await store.openMemory("memory");
    const session = new lib.Session({ sessionId: "s-2" });
    session.record("user_input", "Where should the production deploy go?");
    const compiler = new lib.ContextCompiler({ processors: [new lib.MemoryPreloader(memory, { topK: 3 })] });
    const ctx = await compiler.compile(session, 2000, { systemPrompt: "You deploy." });
    const text = JSON.stringify(ctx.toMessages());
    store.close();
    await deleteDatabase("memory-loop");
    return { size: memory.size, recalled: text.includes("eu-west-3 only") };
  },
};

globalThis.harnessReady = true;
