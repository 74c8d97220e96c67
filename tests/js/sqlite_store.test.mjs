// SqliteArtifactStore over sql.js (SQLite compiled to wasm, in Node): the
// store conformance suite, seed 000's SQLite tests, the schema and its
// version, a transaction failing part-way (a trigger aborts it), tampered
// rows, a database exported and reopened, and bad connections. Deno's
// node:sqlite runs the same suite in tests/js/runtimes.test.mjs.
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import * as lib from "agent-context-compiler";
import { BEHAVIOURS, runStoreSuite } from "../conformance/store_suite.mjs";

const { Session, SqliteArtifactStore, sqlConnection } = lib;
let SQL;
before(async () => {
  const initSqlJs = createRequire(import.meta.url)("sql.js");
  SQL = await initSqlJs();
});

function open(db = new SQL.Database()) {
  return { db, store: new SqliteArtifactStore(sqlConnection(db)) };
}

test("store conformance: SqliteArtifactStore over sql.js", async (t) => {
  const dbs = new WeakMap();
  const backend = {
    async make() {
      const { db, store } = open();
      dbs.set(store, db);
      return store;
    },
    async corrupt(store, id) {
      const db = dbs.get(store);
      const [content] = db.exec("SELECT content FROM acc_artifacts WHERE artifact_id = ?", [id])[0].values[0];
      content[content.length - 1] ^= 1;
      db.run("UPDATE acc_artifacts SET content = ? WHERE artifact_id = ?", [content, id]);
    },
    largeSize: 3 << 20,
  };
  const results = await runStoreSuite(lib, backend);
  assert.equal(results.length, BEHAVIOURS.length);
  for (const r of results) await t.test(r.name, () => assert.ok(r.ok, r.error));
});

test("seed: test_sqlite_store_retrieve_dedup", async () => {
  const { store } = open();
  const content = new TextEncoder().encode("Hello, this is a large tool output that should be externalized.");
  const h1 = await store.store(content, "tool:echo", { mimeType: "text/plain" });
  assert.equal(h1.sizeBytes, content.length);
  assert.ok(h1.summary.length > 0);
  const h2 = await store.store(content, "tool:echo", { mimeType: "text/plain" });
  assert.equal(h2.artifactId, h1.artifactId);
  assert.deepEqual(await store.retrieve(h1.artifactId), content);
  assert.equal(await store.exists(h1.artifactId), true);
  assert.equal(await store.exists("nonexistent"), false);
});

test("seed: test_artifact_handle_summary_truncation", async () => {
  const { store } = open();
  const handle = await store.store("word ".repeat(500), "tool:big", { mimeType: "text/plain" });
  assert.ok(handle.summary.length <= 210, `${handle.summary.length}`);
});

test("the schema: tables, content as a BLOB, events as rows, version 3; a newer version is STORE_VERSION", async () => {
  const { db, store } = open();
  const s = new Session({ sessionId: "s" });
  s.record("user_input", "hello");
  s.record("assistant_output", "hi");
  await store.store("some output", "tool:x", { sessionId: "s" });
  await store.saveSession(s);
  const tables = db.exec("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")[0].values.flat();
  assert.deepEqual(tables, ["acc_artifact_sessions", "acc_artifacts", "acc_events", "acc_guard", "acc_meta", "acc_sessions"]);
  assert.deepEqual(db.exec("SELECT value FROM acc_meta WHERE key = 'schema_version'")[0].values, [["3"]]);
  assert.equal(db.exec("SELECT typeof(content) FROM acc_artifacts")[0].values[0][0], "blob");
  assert.deepEqual(db.exec("SELECT seq, json_extract(event, '$.kind') FROM acc_events ORDER BY seq")[0].values, [[0, "user_input"], [1, "assistant_output"]]);
  assert.deepEqual(db.exec("SELECT event_count, version FROM acc_sessions")[0].values, [[2, 1]]);
  s.record("user_input", "again");
  await store.saveSession(s);
  assert.deepEqual(db.exec("SELECT event_count, version FROM acc_sessions")[0].values, [[3, 2]], "every save moves the version");
  db.run("UPDATE acc_meta SET value = '4' WHERE key = 'schema_version'");
  await assert.rejects(open(db).store.listSessions(), (e) => e.code === "STORE_VERSION" && /version 4/.test(e.message));
});

test("a schema version 1 database (no head version) is read as it is and migrated by the first write", async () => {
  const { db, store } = open();
  const s = new Session({ sessionId: "old" });
  s.record("user_input", "saved by version 1");
  await store.saveSession(s);
  // Version 1's tables: the same but for acc_sessions.version.
  db.run("ALTER TABLE acc_sessions DROP COLUMN version");
  db.run("ALTER TABLE acc_sessions DROP COLUMN lease_holder");
  db.run("ALTER TABLE acc_sessions DROP COLUMN lease_until");
  db.run("UPDATE acc_meta SET value = '1' WHERE key = 'schema_version'");
  const reopened = open(db).store;
  const loaded = await reopened.loadSession("old");
  assert.equal(loaded.exportJson(), s.exportJson());
  assert.deepEqual(db.exec("SELECT value FROM acc_meta WHERE key = 'schema_version'")[0].values, [["1"]], "a read migrates nothing");
  loaded.record("user_input", "saved by version 3");
  assert.deepEqual(await reopened.saveSession(loaded), { eventsWritten: 1, rewritten: false });
  assert.deepEqual(db.exec("SELECT event_count, version FROM acc_sessions")[0].values, [[2, 1]]);
});

test("a schema version 2 database (no lease) is read as it is and migrated to version 3 by the first write", async () => {
  const { db, store } = open();
  const s = new Session({ sessionId: "v2" });
  s.record("user_input", "saved by version 2");
  await store.saveSession(s);
  // Version 2's tables: the same but for the lease.
  db.run("ALTER TABLE acc_sessions DROP COLUMN lease_holder");
  db.run("ALTER TABLE acc_sessions DROP COLUMN lease_until");
  db.run("UPDATE acc_meta SET value = '2' WHERE key = 'schema_version'");
  const reopened = open(db).store;
  const loaded = await reopened.loadSession("v2");
  assert.equal(loaded.exportJson(), s.exportJson());
  assert.deepEqual(db.exec("SELECT value FROM acc_meta WHERE key = 'schema_version'")[0].values, [["2"]], "a read migrates nothing");
  loaded.record("user_input", "saved by version 3");
  assert.deepEqual(await reopened.saveSession(loaded), { eventsWritten: 1, rewritten: false });
  assert.deepEqual(db.exec("SELECT value FROM acc_meta WHERE key = 'schema_version'")[0].values, [["3"]]);
  assert.deepEqual(db.exec("SELECT event_count, lease_holder FROM acc_sessions")[0].values, [[2, null]]);
  assert.equal((await reopened.__takeLease("v2", "w", 1000)).outcome, "taken");
});

test("a load reads the head and the rows in one snapshot: a delete and a save anew between them is no STORE_CORRUPT", async () => {
  const db = new SQL.Database();
  const raw = sqlConnection(db);
  const writer = new SqliteArtifactStore(raw);
  const long = new Session({ sessionId: "s" });
  for (const t of ["one", "two", "three"]) long.record("user_input", t);
  await writer.saveSession(long);
  // Right after the load's first query, another writer deletes the session
  // and saves a shorter one under its id.
  let armed = true;
  const reader = new SqliteArtifactStore({
    async query(sql, params) {
      const rows = raw.query(sql, params);
      if (armed && /acc_sessions/.test(sql)) {
        armed = false;
        await writer.deleteSession("s");
        const short = new Session({ sessionId: "s" });
        short.record("user_input", "anew");
        await writer.saveSession(short);
      }
      return rows;
    },
    batch: (statements) => raw.batch(statements),
  });
  const loaded = await reader.loadSession("s");
  assert.equal(armed, false, "the other writer ran during the load");
  assert.deepEqual(JSON.parse(loaded.exportJson()).events.map((e) => e.data), ["one", "two", "three"], "the snapshot the load began with");
  assert.deepEqual(JSON.parse((await reader.loadSession("s")).exportJson()).events.map((e) => e.data), ["anew"]);
});

test("a save that fails inside its transaction keeps the previous session whole", async () => {
  const { db, store } = open();
  const s = new Session({ sessionId: "s" });
  for (let i = 0; i < 3; i++) s.record("user_input", `question ${i}`);
  await store.saveSession(s);
  for (let i = 0; i < 20; i++) s.record("user_input", `later ${i}`);
  db.run("CREATE TRIGGER full BEFORE INSERT ON acc_events WHEN NEW.seq = 10 BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END");
  await assert.rejects(store.saveSession(s), (e) => e.code === "STORE_FAILED" && /disk is full/.test(e.message));
  assert.equal((await store.loadSession("s")).eventLog.length, 3);
  assert.deepEqual(db.exec("SELECT count(*) FROM acc_events")[0].values, [[3]]);
  db.run("DROP TRIGGER full");
  assert.deepEqual(await store.saveSession(s), { eventsWritten: 20, rewritten: false });
  assert.equal((await store.loadSession("s")).exportJson(), s.exportJson());
});

test("a save racing another save of the session is STORE_CONFLICT and drops nothing", async () => {
  const db = new SQL.Database();
  const a = new Session({ sessionId: "shared" });
  for (let i = 0; i < 3; i++) a.record("user_input", `question ${i}`);
  const storeA = open(db).store;
  await storeA.saveSession(a);
  // B is a copy of the saved session that appends; A appends meanwhile.
  const b = await storeA.loadSession("shared");
  b.record("user_input", "from B");
  a.record("assistant_output", "from A");
  // B's store reads the head, then A's save lands before B writes.
  const conn = sqlConnection(db);
  let raced = false;
  const racing = {
    async query(sql, params) {
      const rows = conn.query(sql, params);
      if (!raced && sql.startsWith("SELECT event_count, last_event_id")) {
        raced = true;
        await storeA.saveSession(a);
      }
      return rows;
    },
    batch: (statements) => conn.batch(statements),
  };
  await assert.rejects(new SqliteArtifactStore(racing).saveSession(b), (e) => e.code === "STORE_CONFLICT");
  assert.ok(raced);
  assert.equal((await storeA.loadSession("shared")).exportJson(), a.exportJson(), "A's save is whole");
  assert.deepEqual(db.exec("SELECT count(*) FROM acc_guard")[0].values, [[0]]);
});

test("tampered or missing rows are never returned as content or sessions", async () => {
  const { db, store } = open();
  const h = await store.store("the real content", "tool:x");
  db.run("UPDATE acc_artifacts SET content = ? WHERE artifact_id = ?", [new TextEncoder().encode("forged"), h.artifactId]);
  await assert.rejects(store.retrieve(h.artifactId), (e) => e.code === "ARTIFACT_INTEGRITY");
  const s = new Session({ sessionId: "s" });
  s.record("user_input", "one");
  s.record("user_input", "two");
  await store.saveSession(s);
  db.run("DELETE FROM acc_events WHERE seq = 1");
  await assert.rejects(store.loadSession("s"), (e) => e.code === "STORE_CORRUPT");
  db.run("UPDATE acc_events SET event = 'not json' WHERE seq = 0");
  await assert.rejects(store.loadSession("s"), (e) => e.code === "STORE_CORRUPT");
});

test("a database exported and reopened has everything", async () => {
  const { db, store } = open();
  const s = new Session({ sessionId: "kept" });
  s.record("user_input", "remember this");
  const h = await store.store("an artifact", "tool:x", { sessionId: "kept" });
  await store.saveSession(s);
  const reopened = open(new SQL.Database(db.export())).store;
  assert.equal(new TextDecoder().decode(await reopened.retrieve(h.artifactId)), "an artifact");
  assert.equal((await reopened.loadSession("kept")).exportJson(), s.exportJson());
  assert.deepEqual((await reopened.listHandles("kept")).map((x) => x.artifactId), [h.artifactId]);
});

test("bad connections are clear errors", async () => {
  assert.throws(() => new SqliteArtifactStore({}), (e) => e.code === "INVALID_ARGUMENT" && /no query/.test(e.message));
  assert.throws(() => new SqliteArtifactStore(null), (e) => e.code === "INVALID_ARGUMENT");
  assert.throws(() => sqlConnection({ hello: 1 }), (e) => e.code === "INVALID_ARGUMENT");
  const throwing = new SqliteArtifactStore({ query: () => { throw new Error("no such table"); }, batch: async () => {} });
  await assert.rejects(throwing.listSessions(), (e) => e.code === "STORE_FAILED" && /no such table/.test(e.message));
  const odd = new SqliteArtifactStore({ query: async () => [[{}]], batch: async () => {} });
  await assert.rejects(odd.listSessions(), (e) => e.code === "STORE_INVALID_VALUE");
  const notRows = new SqliteArtifactStore({ query: async () => "rows", batch: async () => {} });
  await assert.rejects(notRows.exists("x"), (e) => e.code === "STORE_INVALID_VALUE");
});

test("a SqliteArtifactStore externalises a compile's large tool output", async () => {
  const { store } = open();
  const s = new Session({ sessionId: "c" });
  s.record("tool_success", { tool_name: "read_logs", output: "log line\n".repeat(500) });
  const ctx = await new lib.ContextCompiler({ processors: [new lib.HistorySelector(), new lib.ArtifactAttacher(store, { thresholdBytes: 1024 })] }).compile(s, 1000);
  assert.equal(ctx.artifactRefs.length, 1);
  assert.equal(new TextDecoder().decode(await store.retrieve(ctx.artifactRefs[0].handle)), "log line\n".repeat(500));
});
