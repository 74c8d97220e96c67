// The seed's test_artifact_store on the memory backend, plus verified reads.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
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
