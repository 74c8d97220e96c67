// KvArtifactStore faults and edges in Node: KVs that reject, return the wrong
// type, never settle or cannot list; bad arguments; IndexedDB outside a browser.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ArtifactAttacher,
  ContextCompiler,
  IndexedDbArtifactStore,
  KvArtifactStore,
  Session,
  TokenBudget,
  ToolInterruptHandler,
  contentId,
} from "agent-context-compiler";
import { mapKv } from "../conformance/kv_adapters.mjs";
import { rejectsWithCode } from "./helpers.mjs";

const big = (n) => Uint8Array.from({ length: n }, (_, i) => i % 251);

test("the keys written follow the documented layout and respect the value limit", async () => {
  const kv = mapKv({ maxValueBytes: 1024 });
  const store = new KvArtifactStore(kv, { chunkBytes: 1024, prefix: "app/" });
  const small = await store.store("small", "s", { sessionId: "s/1" });
  const large = await store.store(big(3000), "s");
  assert.deepEqual(
    [...kv.map.keys()].sort(),
    [
      `app/a/${large.artifactId}`,
      `app/a/${large.artifactId}#0`,
      `app/a/${large.artifactId}#1`,
      `app/a/${large.artifactId}#2`,
      `app/a/${small.artifactId}`,
      `app/as/s%2F1/${small.artifactId}`,
    ].sort(),
  );
  for (const v of kv.map.values()) assert.ok(v.length <= 1024);
});

test("a put rejecting midway through a chunked write leaves nothing behind, and a retry works", async () => {
  const kv = mapKv();
  const put = kv.put;
  let puts = 0;
  kv.put = async (key, value) => {
    if (key.includes("#") && ++puts > 2) throw new Error("disk on fire");
    return put(key, value);
  };
  const store = new KvArtifactStore(kv, { chunkBytes: 1024 });
  const content = big(10_000);
  const err = await rejectsWithCode(() => store.store(content, "s"), "STORE_FAILED", "disk on fire");
  assert.match(err.message, /chunk 2 of 10/);
  assert.equal(kv.map.size, 0);
  assert.equal(await store.exists(contentId(content)), false);
  kv.put = put;
  const h = await store.store(content, "s");
  assert.deepEqual(await store.retrieve(h.artifactId), content);
});

test("a missing chunk rejects with ARTIFACT_INCOMPLETE, never a truncated artifact", async () => {
  const kv = mapKv();
  const store = new KvArtifactStore(kv, { chunkBytes: 1024 });
  const h = await store.store(big(5000), "s");
  kv.map.delete(`a/${h.artifactId}#3`);
  await rejectsWithCode(() => store.retrieve(h.artifactId), "ARTIFACT_INCOMPLETE", "chunk 3 of 5");
});

test("a KV returning the wrong type rejects with STORE_INVALID_VALUE", async () => {
  for (const wrong of [42, { bytes: [1] }, true, [1, 2]]) {
    const store = new KvArtifactStore({ get: async () => wrong, put: async () => {}, delete: async () => {} });
    await rejectsWithCode(() => store.retrieve("abc"), "STORE_INVALID_VALUE", "kv.get(a/abc)");
  }
  const listy = mapKv();
  listy.list = async () => ({ keys: [] });
  await rejectsWithCode(() => new KvArtifactStore(listy).listHandles(), "STORE_INVALID_VALUE");
  listy.list = async () => [42];
  await rejectsWithCode(() => new KvArtifactStore(listy).listSessions(), "STORE_INVALID_VALUE");
});

test("KVs returning strings (text stores) and list entries as {name} objects work", async () => {
  const inner = mapKv();
  const decoder = new TextDecoder();
  const textKv = {
    get: async (k) => {
      const v = await inner.get(k);
      return v === null ? undefined : decoder.decode(v);
    },
    put: (k, v) => inner.put(k, v),
    delete: (k) => inner.delete(k),
    list: async ({ prefix }) => (await inner.list({ prefix })).map((name) => ({ name })),
  };
  const store = new KvArtifactStore(textKv);
  const h = await store.store("plain text é", "s", { sessionId: "t" });
  assert.equal(new TextDecoder().decode(await store.retrieve(h.artifactId)), "plain text é");
  assert.equal((await store.listHandles("t")).length, 1);
});

test("throwing and rejecting KVs reject with STORE_FAILED naming the operation", async () => {
  const throwing = { get() { throw new Error("sync boom"); }, put: async () => {}, delete: async () => {} };
  await rejectsWithCode(() => new KvArtifactStore(throwing).exists("x"), "STORE_FAILED", "sync boom");
  const rejecting = { get: () => Promise.reject("a bare string"), put: async () => {}, delete: async () => {} };
  await rejectsWithCode(() => new KvArtifactStore(rejecting).retrieve("x"), "STORE_FAILED", "a bare string");
});

test("a KV that never settles times out with STORE_TIMEOUT", async () => {
  const kv = mapKv();
  kv.get = () => new Promise(() => {});
  const store = new KvArtifactStore(kv, { timeoutMs: 30 });
  await rejectsWithCode(() => store.retrieve("abc"), "STORE_TIMEOUT", "30 ms");
});

test("a timeout beyond a host timer's range (2^31 ms) does not fire early", async () => {
  const kv = mapKv();
  const get = kv.get.bind(kv);
  kv.get = async (key) => {
    await new Promise((r) => setTimeout(r, 40));
    return get(key);
  };
  const store = new KvArtifactStore(kv, { timeoutMs: 2 ** 31 + 5 });
  assert.equal(await store.retrieve("0".repeat(64)), null);
});

test("listing without list() is STORE_UNSUPPORTED; everything else works", async () => {
  const kv = mapKv();
  delete kv.list;
  const store = new KvArtifactStore(kv);
  const h = await store.store("x", "s", { sessionId: "s" });
  assert.deepEqual(await store.retrieve(h.artifactId), new TextEncoder().encode("x"));
  await rejectsWithCode(() => store.listHandles("s"), "STORE_UNSUPPORTED");
  await rejectsWithCode(() => store.listSessions(), "STORE_UNSUPPORTED");
  const s = new Session({ sessionId: "nl" });
  s.record("user_input", "hi");
  await store.saveSession(s);
  assert.equal((await store.loadSession("nl")).exportJson(), s.exportJson());
});

test("a save whose head write fails leaves the previous session loadable", async () => {
  const kv = mapKv();
  const store = new KvArtifactStore(kv, { chunkBytes: 1024 });
  const s = new Session({ sessionId: "crashy" });
  s.record("user_input", "first");
  await store.saveSession(s);
  const saved = s.exportJson();
  for (let i = 0; i < 30; i++) s.record("user_input", `lots of words in turn ${i}`);
  // The head moves by putIf (this KV has one).
  const putIf = kv.putIf;
  kv.putIf = async (key, value, expected) => {
    if (key === "s/crashy") throw new Error("crash before the head");
    return putIf(key, value, expected);
  };
  await rejectsWithCode(() => store.saveSession(s), "STORE_FAILED");
  assert.equal((await store.loadSession("crashy")).exportJson(), saved);
  kv.putIf = putIf;
  assert.deepEqual(await store.saveSession(s), { eventsWritten: 30, rewritten: false });
  assert.equal((await store.loadSession("crashy")).exportJson(), s.exportJson());
});

test("a session recorded into while it is being saved is saved consistently", async () => {
  const store = new KvArtifactStore(mapKv());
  const s = new Session({ sessionId: "busy" });
  s.record("user_input", "one");
  const saving = store.saveSession(s);
  s.record("user_input", "two"); // the save borrows the session only briefly
  await saving;
  await store.saveSession(s);
  assert.equal((await store.loadSession("busy")).exportJson(), s.exportJson());
});

test("bad arguments are INVALID_ARGUMENT", async () => {
  for (const kv of [undefined, null, 42, "kv", () => {}, {}, { get() {}, put() {} }]) {
    await rejectsWithCode(() => new KvArtifactStore(kv), "INVALID_ARGUMENT");
  }
  const kv = mapKv();
  await rejectsWithCode(() => new KvArtifactStore(kv, { chunkBytes: 100 }), "INVALID_ARGUMENT", "1024");
  await rejectsWithCode(() => new KvArtifactStore(kv, { chunkBytes: -1 }), "INVALID_ARGUMENT");
  await rejectsWithCode(() => new KvArtifactStore(kv, { timeoutMs: 0 }), "INVALID_ARGUMENT");
  await rejectsWithCode(() => new KvArtifactStore(kv, { timeoutMs: "1s" }), "INVALID_ARGUMENT");
  await rejectsWithCode(() => new KvArtifactStore(kv, { prefix: 3 }), "INVALID_ARGUMENT");
  const store = new KvArtifactStore(kv);
  await rejectsWithCode(() => store.store(42, "s"), "INVALID_ARGUMENT");
  await store.saveSession(new Session({ sessionId: "x" }));
  await rejectsWithCode(() => store.loadSession("x", { tokenCounter: "bogus" }), "INVALID_ARGUMENT");
  for (const session of [{}, null, 42, { __eventCount() {} }]) {
    await rejectsWithCode(() => store.saveSession(session), "INVALID_ARGUMENT", "Session");
  }
});

test("a loaded session records on, with the chosen token counter", async () => {
  const store = new KvArtifactStore(mapKv());
  const s = new Session({ sessionId: "resume", tokenCounter: "words" });
  s.record("user_input", "one two three");
  await store.saveSession(s);
  const loaded = await store.loadSession("resume", { tokenCounter: "words" });
  const e = loaded.record("user_input", "four five six");
  assert.equal(e.tokenEstimate, s.record("user_input", "four five six").tokenEstimate);
  assert.equal(loaded.eventLog.length, 2);
  assert.ok(e.eventId > loaded.eventLog.events[0].eventId, "new ids sort after loaded ones");
});

test("a KV store works as the artifact store of the attacher and the tool handler", async () => {
  const kv = mapKv({ maxValueBytes: 65536 });
  const store = new KvArtifactStore(kv, { chunkBytes: 65536 });
  const session = new Session({ sessionId: "tools" });
  const handler = new ToolInterruptHandler({
    bridge: async () => "x".repeat(200_000),
    session,
    artifactStore: store,
  });
  const event = await handler.call("dump", {});
  assert.equal(event.kind, "tool_success");
  assert.ok(event.artifact, "externalised");
  assert.equal((await store.retrieve(event.artifact.artifactId)).length, 200_000);
  assert.ok(kv.map.size > 3, "chunked");
  const compiler = new ContextCompiler({ processors: [new ArtifactAttacher(store)] });
  const ctx = await compiler.compile(session, new TokenBudget(4000));
  assert.ok(ctx.toMessages().length > 0);
});

test("IndexedDbArtifactStore.open rejects with STORE_UNAVAILABLE where there is no IndexedDB", async () => {
  await rejectsWithCode(() => IndexedDbArtifactStore.open(), "STORE_UNAVAILABLE");
  await rejectsWithCode(() => IndexedDbArtifactStore.open({ durability: "eventually" }), "INVALID_ARGUMENT");
  await rejectsWithCode(() => IndexedDbArtifactStore.open({ storeName: "x", sessionStoreName: "x" }), "INVALID_ARGUMENT");
});

test("contentId is the SHA-256 of bytes or of a string's UTF-8", () => {
  assert.equal(contentId("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  assert.equal(contentId(new TextEncoder().encode("abc")), contentId("abc"));
  assert.throws(() => contentId(42), (e) => e.code === "INVALID_ARGUMENT");
});
