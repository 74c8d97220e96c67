// Several writers of one session over one backend, through the npm package:
// two store instances over a shared Map (with and without putIf), one sql.js
// database and one directory; two real processes over one directory; a
// failure injected at every write step of a save; a seeded kill loop over
// files; two PersistentMemory instances over one store; three writers
// syncing one session. Nothing acknowledged is lost, a stale save rejects
// whole, the session always loads. The Rust
// suite (tests/store_writers.rs) runs the same natively; the browser harness
// runs twoWriters over one IndexedDB.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import initSqlJs from "sql.js";
import * as lib from "agent-context-compiler";
import { nodeFiles } from "../../js/files.js";
import { mapKv } from "../conformance/kv_adapters.mjs";
import { savedTexts, syncedLog, syncingWriter, twoWriters } from "../conformance/writers.mjs";

const { FsArtifactStore, KvArtifactStore, Session, SqliteArtifactStore, sqlConnection } = lib;
const SQL = await initSqlJs();
const root = mkdtempSync(join(tmpdir(), "acc-writers-js-"));
after(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => join(root, String(dirs++));

/** Two stores over one backend, and whether racing writers are safe on it. */
const backends = {
  "KV over one Map, with putIf": () => {
    const map = new Map();
    return [new KvArtifactStore(mapKv({ map })), new KvArtifactStore(mapKv({ map }))];
  },
  "KV over one Map, 1 KiB chunks": () => {
    const map = new Map();
    const options = { chunkBytes: 1024 };
    return [new KvArtifactStore(mapKv({ map }), options), new KvArtifactStore(mapKv({ map }), options)];
  },
  "one sql.js database": () => {
    const db = new SQL.Database();
    return [new SqliteArtifactStore(sqlConnection(db)), new SqliteArtifactStore(sqlConnection(db))];
  },
  "one directory": () => {
    const baseDir = freshDir();
    return [new FsArtifactStore({ baseDir }), new FsArtifactStore({ baseDir })];
  },
};

for (const [name, make] of Object.entries(backends)) {
  test(`two writers, ${name}: a stale save rejects whole, racing saves keep every event`, async () => {
    const seen = await twoWriters(lib, make(), { count: 12 });
    assert.equal(seen.acked, 24);
    assert.ok(seen.conflicts > 0, "the writers raced");
  });
}

for (const [name, make] of Object.entries(backends)) {
  test(`three writers syncing one session, ${name}: every turn once, in one order, each input beside its reply`, async () => {
    const [a, b] = make();
    const runs = await Promise.all([a, b, a].map((store, w) => syncingWriter(lib, store, "shared", `w${w}`, 10)));
    const seen = await syncedLog(a, "shared");
    assert.deepEqual([...seen.texts].sort(), runs.flatMap((r) => r.acked).sort());
    assert.ok(seen.paired);
    assert.deepEqual((await syncedLog(b, "shared")).ids, seen.ids);
  });
}

test("a sync that always meets another writer's save gives up after maxTries, keeping every event", async () => {
  const inner = new lib.MemoryArtifactStore();
  let saves = 0;
  let loads = 0;
  // Another writer always saves one event first.
  const busy = {
    async saveSession(session) {
      saves++;
      const other = (await inner.loadSession(session.sessionId)) ?? new Session({ sessionId: session.sessionId });
      other.record("user_input", `other ${saves}`);
      await inner.saveSession(other);
      return inner.saveSession(session);
    },
    loadSession: (id) => (loads++, inner.loadSession(id)),
  };
  const s = new Session({ sessionId: "busy" });
  s.record("user_input", "mine");
  await assert.rejects(s.sync(busy, { maxTries: 5, baseDelayMs: 1 }), (e) => e.code === "STORE_CONFLICT" && /5 saves/.test(e.message));
  assert.deepEqual([saves, loads], [5, 4], "five saves, a merge between each");
  const held = JSON.parse(s.exportJson()).events.map((e) => e.data);
  assert.deepEqual(held, ["other 1", "other 2", "other 3", "other 4", "mine"], "the others' events before the session's own, unsaved");
  assert.ok(!(await savedTexts(inner, "busy")).includes("mine"));
  // Once the other writer stops, the next sync saves it.
  const report = await s.sync(inner);
  assert.deepEqual(report, { tries: 2, merged: 1, eventsWritten: 1 });
  assert.deepEqual(await savedTexts(inner, "busy"), ["other 1", "other 2", "other 3", "other 4", "other 5", "mine"]);
});

test("a KV without putIf (single writer) still rejects a stale save whole", async () => {
  const map = new Map();
  const stores = [new KvArtifactStore(mapKv({ map, conditional: false })), new KvArtifactStore(mapKv({ map, conditional: false }))];
  const seen = await twoWriters(lib, stores, { racing: false });
  assert.deepEqual(seen.stale, ["first", "from a"]);
});

test("a KV without putIf reads its head back: a save whose head was overwritten rejects", async () => {
  const map = new Map();
  const kv = mapKv({ map, conditional: false });
  const store = new KvArtifactStore(kv);
  const s = new Session({ sessionId: "s" });
  s.record("user_input", "one");
  await store.saveSession(s);
  s.record("user_input", "two");
  // Another writer's head lands right after this save wrote its own.
  const put = kv.put;
  kv.put = async (key, value) => {
    await put(key, value);
    if (key === "s/s") {
      kv.put = put;
      map.set(key, new TextEncoder().encode("another writer's head"));
    }
  };
  await assert.rejects(store.saveSession(s), (e) => e.code === "STORE_CONFLICT");
});

/** A write counter over a store's backend: the `failAt`-th write rejects. */
function failing() {
  const state = { writes: 0, failAt: -1 };
  state.step = (what) => {
    const n = state.writes++;
    if (n === state.failAt) throw new Error(`injected failure at write ${n} (${what})`);
  };
  return state;
}

const faultyBackends = {
  "KV with putIf": (state) => {
    const kv = mapKv();
    for (const m of ["put", "delete", "putIf"]) {
      const inner = kv[m];
      kv[m] = async (key, ...rest) => (state.step(`${m} ${key}`), inner(key, ...rest));
    }
    return new KvArtifactStore(kv, { chunkBytes: 1024 });
  },
  "KV without putIf": (state) => {
    const kv = mapKv({ conditional: false });
    for (const m of ["put", "delete"]) {
      const inner = kv[m];
      kv[m] = async (key, ...rest) => (state.step(`${m} ${key}`), inner(key, ...rest));
    }
    return new KvArtifactStore(kv, { chunkBytes: 1024 });
  },
  files: (state) => {
    const files = nodeFiles(freshDir());
    for (const m of ["write", "remove", "createNew"]) {
      const inner = files[m];
      files[m] = async (path, ...rest) => (state.step(`${m} ${path}`), inner(path, ...rest));
    }
    return new FsArtifactStore({ baseDir: "unused", files, chunkBytes: 4096 });
  },
  "sql.js": (state) => {
    const conn = sqlConnection(new SQL.Database());
    return new SqliteArtifactStore({
      query: (sql, params) => conn.query(sql, params),
      batch: async (statements) => (state.step("batch"), conn.batch(statements)),
    });
  },
};

for (const [name, make] of Object.entries(faultyBackends)) {
  test(`a failure at every write step of a save keeps the saved session: ${name}`, async () => {
    for (let step = 0; ; step++) {
      const state = failing();
      const store = make(state);
      const s = new Session({ sessionId: "s" });
      s.record("user_input", "saved 1");
      s.record("user_input", "saved 2");
      await store.saveSession(s);
      for (let i = 0; i < 40; i++) s.record("user_input", `new ${i} ${"x".repeat(60)}`);
      const before = state.writes;
      state.failAt = before + step;
      let error = null;
      await store.saveSession(s).catch((e) => (error = e));
      state.failAt = -1;
      const reached = state.writes > before + step;
      const n = (await savedTexts(store, "s")).length;
      if (error === null) assert.equal(n, 42, `failure at write ${step}: acknowledged`);
      else {
        assert.ok(["STORE_FAILED"].includes(error.code), `${error.code}: ${error.message}`);
        assert.ok(n === 2 || n === 42, `failure at write ${step}: ${n} events`);
      }
      await store.saveSession(s);
      assert.equal((await savedTexts(store, "s")).length, 42, "the next save completes it");
      if (!reached) {
        assert.ok(step > 0, "a save wrote nothing");
        break;
      }
    }
  });
}

test("two PersistentMemory instances over one store keep every fact", async () => {
  for (const [name, make] of Object.entries(backends)) {
    const [a, b] = make();
    const one = await a.openMemory("facts");
    const two = await b.openMemory("facts");
    await Promise.all([0, 1, 2].map(async (i) => {
      await one.put({ key: `one-${i}`, content: `fact one ${i}` });
      await two.put({ key: `two-${i}`, content: `fact two ${i}` });
    }));
    const reopened = await a.openMemory("facts");
    assert.deepEqual(reopened.list().map((e) => e.key).sort(), ["one-0", "one-1", "one-2", "two-0", "two-1", "two-2"], name);
  }
});

const child = fileURLToPath(new URL("./children/fs_writer.mjs", import.meta.url));

/**
 * Starts a child writer; `started` resolves at its first acknowledgement,
 * `done` to its acknowledged texts and exit.
 */
function startWriter(baseDir, id, name, count) {
  const proc = spawn(process.execPath, [child, baseDir, id, name, String(count)], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  proc.stdout.on("data", (d) => (out += d));
  proc.stderr.on("data", (d) => (err += d));
  const done = new Promise((resolve) => proc.on("exit", (code, signal) => resolve({ acked: out.split("\n").filter(Boolean), code, signal, err })));
  const started = new Promise((resolve) => {
    proc.stdout.once("data", resolve);
    proc.once("exit", resolve);
  });
  return { proc, done, started };
}

test("two real processes over one directory keep every acknowledged event", async () => {
  const baseDir = freshDir();
  const runs = await Promise.all(["p", "q"].map((name) => startWriter(baseDir, "shared", name, 15).done));
  for (const r of runs) assert.equal(r.code, 0, r.err);
  const acked = runs.flatMap((r) => r.acked).sort();
  assert.equal(acked.length, 30);
  assert.deepEqual((await savedTexts(new FsArtifactStore({ baseDir }), "shared")).sort(), acked);
});

test("a seeded kill loop over files: every acknowledged event stays, the session always loads", async () => {
  const baseDir = freshDir();
  let seed = 20261125;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const acked = [];
  for (let round = 0; round < 8; round++) {
    // A writer killed at a seeded moment, beside one that runs to the end.
    const victim = startWriter(baseDir, "killed", `v${round}`, 1000);
    const survivor = startWriter(baseDir, "killed", `s${round}`, 5);
    // Killed at a seeded moment once it is saving.
    await victim.started;
    await new Promise((r) => setTimeout(r, random() * 300));
    victim.proc.kill("SIGKILL");
    const [v, s] = await Promise.all([victim.done, survivor.done]);
    assert.equal(v.signal, "SIGKILL", v.err);
    assert.equal(s.code, 0, s.err);
    acked.push(...v.acked, ...s.acked);
    const saved = await savedTexts(new FsArtifactStore({ baseDir }), "killed");
    assert.equal(new Set(saved).size, saved.length, `round ${round}: no event saved twice`);
    const missing = acked.filter((t) => !saved.includes(t));
    assert.deepEqual(missing, [], `round ${round}: acknowledged events lost`);
  }
  assert.ok(acked.length > 40, `${acked.length} acknowledged`);
});
