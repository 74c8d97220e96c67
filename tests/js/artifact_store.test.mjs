// The seed's test_artifact_store on the memory backend, plus verified reads.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { MemoryArtifactStore } from "agent-context-compiler";
import { rejectsWithCode } from "./helpers.mjs";

const enc = new TextEncoder();

test("store, retrieve, dedup, exists", async () => {
  const store = new MemoryArtifactStore();
  const content = enc.encode("Hello, this is a large tool output that should be externalized.");
  const h1 = await store.store(content, "tool:echo", { mimeType: "text/plain" });
  assert.equal(h1.sizeBytes, content.length);
  assert.ok(h1.summary);
  assert.equal(h1.artifactId, createHash("sha256").update(content).digest("hex"));
  const h2 = await store.store(content, "tool:echo", { mimeType: "text/plain" });
  assert.equal(h2.artifactId, h1.artifactId);
  assert.deepEqual(await store.retrieve(h1.artifactId), content);
  assert.ok(await store.exists(h1.artifactId));
  assert.equal(await store.exists("nonexistent"), false);
  assert.equal(await store.retrieve("nonexistent"), null);
});

test("summary truncation", async () => {
  const store = new MemoryArtifactStore();
  const h = await store.store("word ".repeat(500), "tool:big");
  assert.ok(h.summary.length <= 210);
  assert.equal(h.mimeType, "text/plain");
});

test("strings, ArrayBuffers and Buffers are accepted; other values are not", async () => {
  const store = new MemoryArtifactStore();
  const a = await store.store("abc", "s");
  const b = await store.store(enc.encode("abc").buffer, "s");
  const c = await store.store(Buffer.from("xxabcxx").subarray(2, 5), "s");
  assert.equal(a.artifactId, b.artifactId);
  assert.equal(a.artifactId, c.artifactId);
  await rejectsWithCode(() => store.store({ not: "bytes" }, "s"), "INVALID_ARGUMENT");
  await rejectsWithCode(() => store.store("x", 5), "INVALID_ARGUMENT");
});

test("list by session and delete", async () => {
  const store = new MemoryArtifactStore();
  const a = await store.store("alpha", "tool:a", { sessionId: "s1" });
  const b = await store.store("beta", "tool:b", { sessionId: "s2" });
  assert.equal((await store.listHandles()).length, 2);
  assert.deepEqual((await store.listHandles("s1")).map((h) => h.artifactId), [a.artifactId]);
  assert.ok(await store.delete(b.artifactId));
  assert.equal(await store.delete(b.artifactId), false);
});

test("invalid UTF-8 is stored exactly and summarised as binary (no replacement characters reach a prompt)", async () => {
  const store = new MemoryArtifactStore();
  const bytes = new Uint8Array([0xff, 0xfe, 0x00, 0x61, 0xc3]);
  const h = await store.store(bytes, "tool:bin", { mimeType: "application/octet-stream" });
  assert.deepEqual(await store.retrieve(h.artifactId), bytes);
  assert.equal(h.summary, "binary content (5 bytes)");
});

test("a corrupted artifact is an error, never returned", async () => {
  const store = new MemoryArtifactStore();
  const h = await store.store("the original content", "tool:x");
  const snap = store.snapshot();
  snap[0].content[0] ^= 0x20;
  const restored = new MemoryArtifactStore();
  restored.restore(snap);
  await rejectsWithCode(() => restored.retrieve(h.artifactId), "ARTIFACT_INTEGRITY", h.artifactId);
  // An intact snapshot restores fine.
  const ok = new MemoryArtifactStore();
  ok.restore(store.snapshot());
  assert.equal(new TextDecoder().decode(await ok.retrieve(h.artifactId)), "the original content");
});

test("a 50 MB value round-trips", async () => {
  const store = new MemoryArtifactStore();
  const big = new Uint8Array(50 * 1024 * 1024).map((_, i) => 97 + (i % 26));
  const h = await store.store(big, "tool:huge");
  assert.equal(h.sizeBytes, big.length);
  const back = await store.retrieve(h.artifactId);
  assert.equal(back.length, big.length);
  assert.equal(Buffer.compare(back, big), 0);
});

test("stores hash with the host's crypto (node:crypto, crypto.subtle) or in wasm without it, to the same ids, framing the caller's bytes before store() returns", () => {
  const run = (mode) => {
    const script = fileURLToPath(new URL("./children/host_hash.mjs", import.meta.url));
    const r = spawnSync(process.execPath, [script, mode], { encoding: "utf8", timeout: 120_000 });
    assert.equal(r.status, 0, `${mode}: ${r.stderr}`);
    return JSON.parse(r.stdout.trim().split("\n").pop());
  };
  const expected = createHash("sha256").update("x".repeat(200_000) + "end").digest("hex");
  const results = { node: run("node"), subtle: run("web-subtle"), none: run("web-none") };
  for (const [mode, r] of Object.entries(results)) {
    assert.deepEqual(r.ids, [expected, true, 1, expected, true, 1, expected], mode);
    assert.equal(r.corrupt, "ARTIFACT_INTEGRITY", mode);
    // Inline and chunked: the caller's buffer changed after store() reaches
    // neither the id nor the store; retrieve() views the KV's value (inline)
    // or joins its chunks, so a change to what it gave reaches a KV that
    // hands out its own arrays only inline, and is refused there.
    assert.deepEqual(
      r.own,
      [
        { id: true, intact: true, plain: true, again: "ARTIFACT_INTEGRITY" },
        { id: true, intact: true, plain: true, again: "intact" },
      ],
      mode,
    );
  }
  // Each hash once: store and retrieve in both stores (4), the KV store's
  // session segment saved and loaded (2), the corrupted read (1), contentId
  // (1). A failing host hash falls back to wasm, so the counts are exact.
  assert.deepEqual(results.node.calls, { createHash: 8, digest: 0 });
  // contentId is synchronous: crypto.subtle serves the stores only.
  assert.deepEqual(results.subtle.calls, { createHash: 0, digest: 7 });
  assert.deepEqual(results.none.calls, { createHash: 0, digest: 0 });
});

/** A store written in JS over a Map, noting every call. */
function jsStore(overrides = {}) {
  const content = new Map();
  const calls = [];
  const store = {
    async store(bytes, source, options) {
      calls.push(["store", bytes instanceof Uint8Array, source, options]);
      const artifactId = createHash("sha256").update(bytes).digest("hex");
      content.set(artifactId, bytes);
      return { artifactId, summary: "s", sizeBytes: bytes.length, mimeType: options.mimeType ?? "text/plain", createdAt: 1, source };
    },
    async retrieve(id) {
      return content.get(id) ?? null;
    },
    async exists(id) {
      return content.has(id);
    },
    async listHandles() {
      return [];
    },
    async delete(id) {
      return content.delete(id);
    },
    ...overrides,
  };
  return { store, calls, content };
}

/** A compile whose attacher externalises one large tool result to `store`. */
async function attach(lib, store) {
  const s = new lib.Session({ sessionId: "js-store" });
  s.record("tool_success", { tool: "big", result: "x".repeat(5000) });
  const compiler = new lib.ContextCompiler({
    processors: [new lib.HistorySelector(), new lib.ArtifactAttacher(store, { thresholdBytes: 1024 })],
  });
  return compiler.compile(s, 500);
}

test("an artifact store written in JS is called through its methods", async () => {
  const lib = await import("agent-context-compiler");
  const { store, calls, content } = jsStore();
  const ctx = await attach(lib, store);
  assert.equal(ctx.artifactRefs.length, 1);
  assert.deepEqual(calls, [["store", true, "tool:big", { sessionId: "js-store" }]]);
  assert.equal(new TextDecoder().decode(content.get(ctx.artifactRefs[0].handle)), "x".repeat(5000));
  // A tool handler's artifactStore takes one too.
  const session = new lib.Session({ sessionId: "tools" });
  const handler = new lib.ToolInterruptHandler({
    bridge: async () => "log line\n".repeat(500),
    session,
    artifactStore: store,
    externalizeThreshold: 1024,
  });
  const event = await handler.call("logs", {});
  assert.equal(new TextDecoder().decode(content.get(event.artifact.artifactId)), "log line\n".repeat(500));
  assert.deepEqual(calls[1], ["store", true, "tool:logs", { mimeType: "text/plain", sessionId: "tools" }]);
});

test("a JS artifact store's failures are coded: its own codes kept, anything else STORE_FAILED or STORE_INVALID_VALUE", async () => {
  const lib = await import("agent-context-compiler");
  const coded = Object.assign(new Error("quota"), { code: "STORE_QUOTA_EXCEEDED" });
  const cases = [
    [{ store: async () => { throw coded; } }, "STORE_QUOTA_EXCEEDED", "quota"],
    [{ store: () => { throw new Error("sync boom"); } }, "STORE_FAILED", "store.store threw: sync boom"],
    [{ store: async () => Promise.reject("a string") }, "STORE_FAILED", "store.store rejected: a string"],
    [{ store: async () => ({ artifactId: 42 }) }, "STORE_INVALID_VALUE", "handle"],
    [{ store: async () => null }, "STORE_INVALID_VALUE", "handle"],
    [{ store: async () => Object.assign(new Error("x"), { code: "NOT_A_CODE" }) }, "STORE_INVALID_VALUE", "handle"],
  ];
  for (const [override, code, part] of cases) {
    await rejectsWithCode(() => attach(lib, jsStore(override).store), code, part);
  }
  for (const bad of [{}, { store() {} }, 42, "store", () => {}]) {
    await rejectsWithCode(() => new lib.ArtifactAttacher(bad), "INVALID_ARGUMENT", "artifact store");
  }
});
