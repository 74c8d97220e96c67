// Which SHA-256 the stores and contentId use, per entry, and that every path
// gives the same ids. argv[2]: "node" (node:crypto, spied), "web-subtle"
// (the web entry with crypto.subtle, spied) or "web-none" (the web entry in
// a host without WebCrypto: wasm sha2).
import nodeCrypto from "node:crypto";
import { syncBuiltinESMExports } from "node:module";
import { readFileSync } from "node:fs";

const mode = process.argv[2];
const calls = { createHash: 0, digest: 0 };
if (mode === "node") {
  // Taken by value: after syncBuiltinESMExports an imported binding would be the spy.
  const realCreateHash = nodeCrypto.createHash;
  nodeCrypto.createHash = (...args) => (calls.createHash++, realCreateHash(...args));
  syncBuiltinESMExports();
} else if (mode === "web-subtle") {
  const subtle = globalThis.crypto.subtle;
  const digest = subtle.digest.bind(subtle);
  subtle.digest = (...args) => (calls.digest++, digest(...args));
} else {
  delete globalThis.crypto;
}

const lib = mode === "node" ? await import("agent-context-compiler") : await import("agent-context-compiler/web");
if (mode !== "node") {
  lib.initSync({
    main: readFileSync(new URL("../../../pkg/context_compiler_bg.wasm", import.meta.url)),
    stores: readFileSync(new URL("../../../pkg/context_compiler_stores_bg.wasm", import.meta.url)),
  });
}
const { KvArtifactStore, MemoryArtifactStore, Session, contentId } = lib;

const map = new Map();
const kv = {
  async get(k) { return map.get(k) ?? null; },
  async put(k, v) { map.set(k, v.slice()); },
  async delete(k) { map.delete(k); },
  async list({ prefix }) { return [...map.keys()].filter((k) => k.startsWith(prefix)); },
};
const content = new TextEncoder().encode("x".repeat(200_000) + "end");
const before = { ...calls };
const ids = [];
for (const store of [new MemoryArtifactStore(), new KvArtifactStore(kv, { chunkBytes: 65536 })]) {
  const handle = await store.store(content, "test");
  const back = await store.retrieve(handle.artifactId);
  ids.push(handle.artifactId, back.length === content.length && back[back.length - 1] === 100);
  const s = new Session({ sessionId: "s" });
  s.record("user_input", "hello");
  await store.saveSession(s);
  ids.push((await store.loadSession("s")).eventLog.length);
}
ids.push(contentId(content));
// A corrupted artifact is refused whichever hash checks it.
const key = [...map.keys()].find((k) => k.endsWith("#3"));
map.get(key)[0] ^= 1;
let corrupt;
try {
  await new KvArtifactStore(kv, { chunkBytes: 65536 }).retrieve(ids[0]);
} catch (e) {
  corrupt = e.code;
}
const used = { createHash: calls.createHash - before.createHash, digest: calls.digest - before.digest };

// Whichever hash: the caller may reuse its buffer as soon as store()
// returns, even over a KV that keeps the arrays it is given and hands them
// back as they are. retrieve() gives a plain Uint8Array viewing what the KV
// returned (no copy): over such a KV, changing it changes the record, which
// the next read refuses; chunks are joined into an array of the caller's own.
const kept = new Map();
const naive = {
  async get(k) { return kept.get(k) ?? null; },
  async put(k, v) { kept.set(k, v); },
  async delete(k) { kept.delete(k); },
};
const own = [];
for (const chunkBytes of [1 << 20, 65536]) {
  const store = new KvArtifactStore(naive, { chunkBytes });
  const text = `${"y".repeat(100_000)} ${chunkBytes}`;
  const bytes = new TextEncoder().encode(text);
  const pending = store.store(bytes, "test");
  bytes.fill(0);
  const handle = await pending;
  const back = await store.retrieve(handle.artifactId);
  const intact = new TextDecoder().decode(back) === text;
  back.fill(1);
  let again;
  try {
    again = new TextDecoder().decode(await store.retrieve(handle.artifactId)) === text ? "intact" : "changed";
  } catch (e) {
    again = e.code;
  }
  own.push({ id: handle.artifactId === contentId(text), intact, plain: back.constructor === Uint8Array, again });
}
console.log(JSON.stringify({ ids, corrupt, calls: used, own }));
