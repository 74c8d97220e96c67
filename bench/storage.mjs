// Storage benchmarks: SHA-256 in wasm beside node:crypto, and store / retrieve
// MB/s for each backend beside a hand-written JS store doing the same work
// (hash on write, verify on read) over the same backend, all in one run.
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { mkdir, open, readFile, rename } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FsArtifactStore, KvArtifactStore, MemoryArtifactStore, contentId } from "agent-context-compiler";
import { mapKv } from "../tests/conformance/kv_adapters.mjs";
import { launchChromium } from "../tests/browser/chromium.mjs";
import { startServer } from "../tests/browser/server.mjs";

const MB = 1 << 20;
const ARTIFACT_BYTES = 1 * MB;
const ARTIFACTS = 32;

export function payloads(count, size) {
  const out = [];
  for (let n = 0; n < count; n++) {
    const b = new Uint8Array(size);
    let x = (n + 1) * 2654435761;
    for (let i = 0; i < size; i++) {
      x = (x * 1103515245 + 12345) >>> 0;
      b[i] = x >>> 24;
    }
    out.push(b);
  }
  return out;
}

function mbps(bytes, ms) {
  return bytes / MB / (ms / 1000);
}

async function timed(fn) {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

/** The peer: a content-addressed store written directly in JS over the same KV. */
export function handWrittenStore(kv) {
  const sha = (b) => createHash("sha256").update(b).digest("hex");
  return {
    async store(bytes) {
      const id = sha(bytes);
      await kv.put(`a/${id}`, bytes);
      return id;
    },
    async retrieve(id) {
      const bytes = await kv.get(`a/${id}`);
      if (sha(bytes) !== id) throw new Error("corrupted");
      return bytes;
    },
  };
}

/**
 * The peer for files: a content-addressed store written directly in JS with
 * the same guarantees as FsArtifactStore (node:crypto hash, the file written
 * to a temporary name, synced and renamed; read back and verified).
 */
export function handWrittenFsStore(dir) {
  const sha = (b) => createHash("sha256").update(b).digest("hex");
  const path = (id) => join(dir, id.slice(0, 2), id);
  return {
    async store(bytes) {
      const id = sha(bytes);
      await mkdir(join(dir, id.slice(0, 2)), { recursive: true });
      const tmp = `${path(id)}.tmp`;
      const handle = await open(tmp, "w");
      await handle.writeFile(bytes);
      await handle.sync();
      await handle.close();
      await rename(tmp, path(id));
      return id;
    },
    async retrieve(id) {
      const bytes = await readFile(path(id));
      if (sha(bytes) !== id) throw new Error("corrupted");
      return bytes;
    },
  };
}

const benchDirs = [];
process.on("exit", () => benchDirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/**
 * The peer for SQLite: a content-addressed table written directly in JS over
 * the same sql.js database engine (node:crypto hash, INSERT OR IGNORE in a
 * transaction; SELECT and verify on read).
 */
export function handWrittenSqlStore(db) {
  const sha = (b) => createHash("sha256").update(b).digest("hex");
  db.run("CREATE TABLE IF NOT EXISTS peer (id TEXT PRIMARY KEY, content BLOB NOT NULL)");
  return {
    async store(bytes) {
      const id = sha(bytes);
      db.run("BEGIN");
      db.run("INSERT OR IGNORE INTO peer (id, content) VALUES (?, ?)", [id, bytes]);
      db.run("COMMIT");
      return id;
    },
    async retrieve(id) {
      const bytes = db.exec("SELECT content FROM peer WHERE id = ?", [id])[0].values[0][0];
      if (sha(bytes) !== id) throw new Error("corrupted");
      return bytes;
    },
  };
}

/** A fresh empty directory for one round of a files benchmark (removed at exit). */
export function benchDir() {
  const dir = mkdtempSync(join(tmpdir(), "acc-bench-fs-"));
  benchDirs.push(dir);
  return dir;
}

export async function measure(store, data) {
  const ids = [];
  const storeMs = await timed(async () => {
    for (const d of data) ids.push(await store.store(d, "bench"));
  });
  const idOf = (h) => (typeof h === "string" ? h : h.artifactId);
  const retrieveMs = await timed(async () => {
    for (const h of ids) await store.retrieve(idOf(h));
  });
  const total = data.reduce((n, d) => n + d.length, 0);
  return { store: mbps(total, storeMs), retrieve: mbps(total, retrieveMs) };
}

function row(name, ours, peer) {
  const f = (x) => x.toFixed(0).padStart(6);
  console.log(
    `  ${name.padEnd(34)} ${f(ours.store)} / ${f(ours.retrieve)}        ${f(peer.store)} / ${f(peer.retrieve)}        ${(ours.store / peer.store).toFixed(2)} / ${(ours.retrieve / peer.retrieve).toFixed(2)}`,
  );
}

export async function storageBench() {
  // SHA-256.
  const big = payloads(1, 64 * MB)[0];
  const rounds = 4;
  contentId(big.subarray(0, MB));
  const wasmMs = await timed(() => {
    for (let i = 0; i < rounds; i++) contentId(big);
  });
  const nodeMs = await timed(() => {
    for (let i = 0; i < rounds; i++) createHash("sha256").update(big).digest("hex");
  });
  if (contentId(big) !== createHash("sha256").update(big).digest("hex")) throw new Error("sha256 differs");
  const ours = mbps(big.length * rounds, wasmMs);
  const peer = mbps(big.length * rounds, nodeMs);
  console.log(`\nSHA-256 of 64 MB (x${rounds}), MB/s`);
  console.log(`  this library  contentId (wasm sha2, copy into wasm included): ${ours.toFixed(0)}`);
  console.log(`  node:crypto   createHash("sha256") (OpenSSL, native):        ${peer.toFixed(0)}`);
  console.log(`  ratio (ours / peer): ${(ours / peer).toFixed(2)}`);

  // Store / retrieve in Node.
  const data = payloads(ARTIFACTS, ARTIFACT_BYTES);
  console.log(`\nstore / retrieve of ${ARTIFACTS} x ${ARTIFACT_BYTES / MB} MB artifacts, MB/s (peer: hand-written JS, node:crypto hash + the same KV)`);
  console.log("  backend                            this library store / retrieve   peer store / retrieve   ratio");
  row("memory", await measure(new MemoryArtifactStore(), data), await measure(handWrittenStore(mapKv()), data));
  row("KV over a Map (no limit)", await measure(new KvArtifactStore(mapKv(), { chunkBytes: 32 * MB }), data), await measure(handWrittenStore(mapKv()), data));
  row("files (FsArtifactStore)", await measure(new FsArtifactStore({ baseDir: benchDir() }), data), await measure(handWrittenFsStore(benchDir()), data));
  row(
    "KV, Deno's 64 KiB values (chunked)",
    await measure(new KvArtifactStore(mapKv({ maxValueBytes: 65536 })), data),
    await measure(chunkingPeer(mapKv({ maxValueBytes: 65536 }), 65536), data),
  );

  await indexedDbBench();
}

/** The peer for a value-limited KV: hash, then chunks of at most `limit` bytes. */
function chunkingPeer(kv, limit) {
  const sha = (b) => createHash("sha256").update(b).digest("hex");
  return {
    async store(bytes) {
      const id = sha(bytes);
      let n = 0;
      for (let i = 0; i < bytes.length; i += limit) await kv.put(`a/${id}#${n++}`, bytes.subarray(i, i + limit));
      await kv.put(`a/${id}`, new TextEncoder().encode(JSON.stringify({ chunks: n, bytes: bytes.length })));
      return id;
    },
    async retrieve(id) {
      const { chunks, bytes } = JSON.parse(new TextDecoder().decode(await kv.get(`a/${id}`)));
      const out = new Uint8Array(bytes);
      let at = 0;
      for (let i = 0; i < chunks; i++) {
        const c = await kv.get(`a/${id}#${i}`);
        out.set(c, at);
        at += c.length;
      }
      if (sha(out) !== id) throw new Error("corrupted");
      return out;
    },
  };
}

async function indexedDbBench() {
  let browser;
  const server = await startServer();
  try {
    browser = await launchChromium();
    const page = await browser.newPage();
    await page.goto(`${server.origin}/bench/browser/idb.html`);
    await page.waitForFunction(() => globalThis.benchReady === true, null, { timeout: 30_000 });
    const r = await page.evaluate(([n, size]) => globalThis.idbBench(n, size), [ARTIFACTS, ARTIFACT_BYTES]);
    console.log("  (headless Chromium; peer: raw IndexedDB + crypto.subtle.digest)");
    row("IndexedDB", r.ours, r.peer);
    row("KV over a Map, in Chromium", r.kvOurs, r.kvPeer);
    console.log(`  SHA-256 in Chromium: contentId ${r.shaOurs.toFixed(0)} MB/s, crypto.subtle.digest ${r.shaPeer.toFixed(0)} MB/s, ratio ${(r.shaOurs / r.shaPeer).toFixed(2)}`);
  } catch (e) {
    console.log(`  IndexedDB: not measured (${e.message})`);
  } finally {
    await browser?.close();
    await server.close();
  }
}
