// Store / retrieve MB/s in Chromium: IndexedDbArtifactStore beside raw
// IndexedDB with crypto.subtle.digest, and the KV store beside a hand-written
// one; plus SHA-256 (wasm beside crypto.subtle).
import * as lib from "../../js/web.js";
import { mapKv } from "../../tests/conformance/kv_adapters.mjs";

await lib.init({ modules: ["stores"] });

const MB = 1 << 20;
const hex = (buf) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, "0")).join("");
const sha = async (bytes) => hex(await crypto.subtle.digest("SHA-256", bytes));

function payloads(count, size) {
  const out = [];
  for (let n = 0; n < count; n++) {
    const b = new Uint8Array(size);
    for (let i = 0; i < size; i += 65536) crypto.getRandomValues(b.subarray(i, Math.min(size, i + 65536)));
    out.push(b);
  }
  return out;
}

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function rawIdb(name) {
  const open = indexedDB.open(name, 1);
  open.onupgradeneeded = () => open.result.createObjectStore("artifacts");
  const db = await request(open);
  return {
    db,
    async store(bytes) {
      const id = await sha(bytes);
      const tx = db.transaction("artifacts", "readwrite");
      tx.objectStore("artifacts").put({ content: bytes, size: bytes.length }, id);
      await new Promise((resolve, reject) => {
        tx.oncomplete = resolve;
        tx.onabort = () => reject(tx.error);
      });
      return id;
    },
    async retrieve(id) {
      const tx = db.transaction("artifacts");
      const record = await request(tx.objectStore("artifacts").get(id));
      if ((await sha(record.content)) !== id) throw new Error("corrupted");
      return record.content;
    },
  };
}

function kvPeer(kv) {
  return {
    async store(bytes) {
      const id = await sha(bytes);
      await kv.put(`a/${id}`, bytes);
      return id;
    },
    async retrieve(id) {
      const bytes = await kv.get(`a/${id}`);
      if ((await sha(bytes)) !== id) throw new Error("corrupted");
      return bytes;
    },
  };
}

async function measure(store, data) {
  const ids = [];
  let t0 = performance.now();
  for (const d of data) ids.push(await store.store(d, "bench"));
  const storeMs = performance.now() - t0;
  t0 = performance.now();
  for (const h of ids) await store.retrieve(typeof h === "string" ? h : h.artifactId);
  const retrieveMs = performance.now() - t0;
  const total = data.reduce((n, d) => n + d.length, 0) / MB;
  return { store: total / (storeMs / 1000), retrieve: total / (retrieveMs / 1000) };
}

function deleteDb(name) {
  return request(indexedDB.deleteDatabase(name));
}

globalThis.idbBench = async (count, size) => {
  const data = payloads(count, size);
  const ours = await lib.IndexedDbArtifactStore.open({ databaseName: "bench-ours" });
  const oursResult = await measure(ours, data);
  ours.close();
  await deleteDb("bench-ours");
  const peer = await rawIdb("bench-peer");
  const peerResult = await measure(peer, data);
  peer.db.close();
  await deleteDb("bench-peer");
  const kvOurs = await measure(new lib.KvArtifactStore(mapKv(), { chunkBytes: 32 * MB }), data);
  const kvPeerResult = await measure(kvPeer(mapKv()), data);
  const big = payloads(1, 64 * MB)[0];
  let t0 = performance.now();
  for (let i = 0; i < 4; i++) lib.contentId(big);
  const shaOurs = (4 * 64) / ((performance.now() - t0) / 1000);
  t0 = performance.now();
  for (let i = 0; i < 4; i++) await sha(big);
  const shaPeer = (4 * 64) / ((performance.now() - t0) / 1000);
  return { ours: oursResult, peer: peerResult, kvOurs, kvPeer: kvPeerResult, shaOurs, shaPeer };
};

globalThis.benchReady = true;
