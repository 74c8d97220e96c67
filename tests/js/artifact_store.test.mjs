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

test("invalid UTF-8 is stored exactly, with a lossy summary", async () => {
  const store = new MemoryArtifactStore();
  const bytes = new Uint8Array([0xff, 0xfe, 0x00, 0x61, 0xc3]);
  const h = await store.store(bytes, "tool:bin", { mimeType: "application/octet-stream" });
  assert.deepEqual(await store.retrieve(h.artifactId), bytes);
  assert.ok(h.summary.includes("\ufffd"));
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

test("stores hash with the host's crypto (node:crypto, crypto.subtle) or in wasm without it, to the same ids", () => {
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
  }
  // Each hash once: store and retrieve in both stores (4), the KV store's
  // session segment saved and loaded (2), the corrupted read (1), contentId
  // (1). A failing host hash falls back to wasm, so the counts are exact.
  assert.deepEqual(results.node.calls, { createHash: 8, digest: 0 });
  // contentId is synchronous: crypto.subtle serves the stores only.
  assert.deepEqual(results.subtle.calls, { createHash: 0, digest: 7 });
  assert.deepEqual(results.none.calls, { createHash: 0, digest: 0 });
});
