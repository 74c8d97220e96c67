// PostgresArtifactStore against a real PostgreSQL server (scripts/with-servers.sh
// starts a throwaway cluster): the store conformance suite, the schema and
// its version 1 migration, writers racing through separate pools (a stale
// save rejects whole, READ COMMITTED included), session.sync with four
// writers, a pg Client as well as a Pool, and a writer whose connection is
// killed mid-transaction.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import * as lib from "agent-context-compiler";
import { BEHAVIOURS, runStoreSuite } from "../conformance/store_suite.mjs";
import { savedTexts, twoWriters } from "../conformance/writers.mjs";
import { pgSchema, serverUrl } from "./servers.mjs";

const { PostgresArtifactStore, Session, pgConnection } = lib;
const open = [];
after(async () => {
  for (const s of open) await s.drop();
});
async function schema(tag) {
  const s = await pgSchema(tag);
  open.push(s);
  return s;
}

test("store conformance: PostgresArtifactStore over a pg Pool", async (t) => {
  const pools = new Map();
  const backend = {
    async make() {
      const s = await schema("conf");
      const store = new PostgresArtifactStore(pgConnection(s.pool));
      pools.set(store, s.pool);
      return store;
    },
    async corrupt(store, id) {
      await pools.get(store).query("UPDATE acc_artifacts SET content = content || '\\x00'::bytea WHERE artifact_id = $1", [id]);
    },
    largeSize: 3 << 20,
  };
  const results = await runStoreSuite(lib, backend);
  assert.equal(results.length, BEHAVIOURS.length);
  for (const r of results) await t.test(r.name, () => assert.ok(r.ok, r.error));
});

test("the schema: BYTEA content, one row per event, version 3 with a moving head version and a lease; a newer version is STORE_VERSION", async () => {
  const { pool } = await schema("schema");
  const store = new PostgresArtifactStore(pgConnection(pool));
  const s = new Session({ sessionId: "s" });
  s.record("user_input", "hello");
  s.record("assistant_output", "hi");
  await store.store("some output", "tool:x", { sessionId: "s" });
  await store.saveSession(s);
  const types = await pool.query("SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND column_name IN ('content', 'event', 'version', 'lease_holder', 'lease_until') ORDER BY 1, 2");
  assert.deepEqual(types.rows.map((r) => `${r.table_name}.${r.column_name} ${r.data_type}`), ["acc_artifacts.content bytea", "acc_events.event text", "acc_sessions.lease_holder text", "acc_sessions.lease_until double precision", "acc_sessions.version bigint"]);
  assert.deepEqual((await pool.query("SELECT value FROM acc_meta WHERE key = 'schema_version'")).rows, [{ value: "3" }]);
  assert.deepEqual((await pool.query("SELECT seq, event::json->>'kind' AS kind FROM acc_events ORDER BY seq")).rows, [{ seq: "0", kind: "user_input" }, { seq: "1", kind: "assistant_output" }]);
  s.record("user_input", "again");
  await store.saveSession(s);
  assert.deepEqual((await pool.query("SELECT event_count, version FROM acc_sessions")).rows, [{ event_count: "3", version: "2" }]);
  assert.equal((await new PostgresArtifactStore(pgConnection(pool)).loadSession("s")).exportJson(), s.exportJson());
  await pool.query("UPDATE acc_meta SET value = '4' WHERE key = 'schema_version'");
  await assert.rejects(new PostgresArtifactStore(pgConnection(pool)).listSessions(), (e) => e.code === "STORE_VERSION" && /version 4/.test(e.message));
});

test("a schema version 1 database is read as it is and migrated by the first writes, also by writers writing together", async () => {
  const { pool, another } = await schema("v1");
  const s = new Session({ sessionId: "old" });
  s.record("user_input", "saved by version 1");
  await new PostgresArtifactStore(pgConnection(pool)).saveSession(s);
  await pool.query("ALTER TABLE acc_sessions DROP COLUMN version, DROP COLUMN lease_holder, DROP COLUMN lease_until");
  await pool.query("UPDATE acc_meta SET value = '1' WHERE key = 'schema_version'");
  const pools = [pool, another(), another()];
  const loaded = await Promise.all(pools.map((p) => new PostgresArtifactStore(pgConnection(p)).loadSession("old")));
  for (const l of loaded) assert.equal(l.exportJson(), s.exportJson());
  assert.deepEqual((await pool.query("SELECT value FROM acc_meta WHERE key = 'schema_version'")).rows, [{ value: "1" }], "a read migrates nothing");
  await Promise.all(pools.map((p, i) => new PostgresArtifactStore(pgConnection(p)).store(`written ${i}`, "tool:x")));
  assert.deepEqual((await pool.query("SELECT value FROM acc_meta WHERE key = 'schema_version'")).rows, [{ value: "3" }]);
  loaded[0].record("user_input", "saved by version 3");
  await new PostgresArtifactStore(pgConnection(pool)).saveSession(loaded[0]);
  await Promise.all(pools.slice(1).map((p) => p.end()));
});

test("two writers through two pools: a stale save rejects whole, racing saves keep every event", async () => {
  const { pool, another } = await schema("two");
  const other = another();
  const seen = await twoWriters(lib, [new PostgresArtifactStore(pgConnection(pool)), new PostgresArtifactStore(pgConnection(other))], { count: 12 });
  assert.equal(seen.acked, 24);
  assert.ok(seen.conflicts > 0, "the writers raced");
  await other.end();
});

test("eight saves from one base racing on eight connections: exactly one wins, under READ COMMITTED", async () => {
  const { pool } = await schema("race");
  const store = new PostgresArtifactStore(pgConnection(pool));
  const base = new Session({ sessionId: "r" });
  base.record("user_input", "base");
  await store.saveSession(base);
  for (let round = 0; round < 5; round++) {
    const copies = await Promise.all(Array.from({ length: 8 }, () => store.loadSession("r")));
    copies.forEach((c, i) => c.record("user_input", `round ${round} writer ${i}`));
    const outcomes = await Promise.allSettled(copies.map((c) => new PostgresArtifactStore(pgConnection(pool)).saveSession(c)));
    const won = outcomes.filter((o) => o.status === "fulfilled").length;
    assert.equal(won, 1, `round ${round}: ${outcomes.map((o) => o.reason?.code ?? "ok")}`);
    for (const o of outcomes) if (o.status === "rejected") assert.equal(o.reason.code, "STORE_CONFLICT", o.reason.message);
    assert.equal((await savedTexts(store, "r")).length, round + 2);
  }
  assert.deepEqual((await pool.query("SELECT count(*)::int AS n FROM acc_guard")).rows, [{ n: 0 }]);
});

test("session.sync: four writers, each holding its session, keep every event once in one order", async () => {
  const { pool, another } = await schema("sync");
  const pools = [pool, another(), another(), another()];
  const stores = pools.map((p) => new PostgresArtifactStore(pgConnection(p)));
  const reports = await Promise.all(stores.map(async (store, w) => {
    const session = new Session({ sessionId: "shared" });
    const tries = [];
    for (let i = 0; i < 15; i++) {
      session.record("user_input", `w${w}-${i}`);
      const call = session.record("tool_call", { tool: "t", args: { i } });
      session.record("tool_success", { tool: "t", result: `r${w}-${i}`, call_event_id: call.eventId });
      tries.push((await session.sync(store, { maxTries: 1000 })).tries);
    }
    session.free();
    return tries;
  }));
  const events = JSON.parse((await stores[0].loadSession("shared")).exportJson()).events;
  assert.equal(events.length, 4 * 15 * 3);
  const texts = events.filter((e) => e.kind === "user_input").map((e) => e.data);
  assert.equal(new Set(texts).size, 60, "each event once");
  events.forEach((e, i) => {
    if (e.kind === "user_input") assert.deepEqual([events[i + 1].kind, events[i + 2].kind], ["tool_call", "tool_success"]);
  });
  assert.ok(reports.flat().some((t) => t > 1), "the writers raced");
  const again = JSON.parse((await stores[3].loadSession("shared")).exportJson()).events;
  assert.deepEqual(again.map((e) => e.eventId), events.map((e) => e.eventId), "every reader sees one order");
  await Promise.all(pools.slice(1).map((p) => p.end()));
});

test("deleteSession racing a syncing writer: the writer's next sync saves its session again whole", async () => {
  const { pool, another } = await schema("delete");
  const deleter = another();
  const store = new PostgresArtifactStore(pgConnection(pool));
  const other = new PostgresArtifactStore(pgConnection(deleter));
  const session = new Session({ sessionId: "d" });
  let deleted = 0;
  for (let i = 0; i < 20; i++) {
    session.record("user_input", `turn ${i}`);
    const syncing = session.sync(store);
    if (i % 5 === 4 && i < 15) deleted += (await other.deleteSession("d")) ? 1 : 0;
    await syncing;
  }
  assert.ok(deleted > 0, "a delete found the session");
  const texts = await savedTexts(other, "d");
  assert.deepEqual(texts, Array.from({ length: 20 }, (_, i) => `turn ${i}`), "the writer saved its whole session again");
  await deleter.end();
});

test("session.sync options and arguments are checked", async () => {
  const s = new Session({ sessionId: "x" });
  await assert.rejects(s.sync({}), (e) => e.code === "INVALID_ARGUMENT");
  await assert.rejects(s.sync(new lib.MemoryArtifactStore(), { maxTries: 0 }), (e) => e.code === "INVALID_ARGUMENT" && /maxTries/.test(e.message));
  await assert.rejects(s.sync(new lib.MemoryArtifactStore(), { retries: 3 }), (e) => e.code === "INVALID_ARGUMENT" && /unknown option retries/.test(e.message));
  assert.deepEqual(await s.sync(new lib.MemoryArtifactStore()), { tries: 1, merged: 0, eventsWritten: 0 });
});

test("a pg Client serialises its batches; bad connections are clear errors", async () => {
  const { schema: name } = await schema("client");
  const client = new pg.Client({ connectionString: serverUrl("ACC_PG_URL"), options: `-c search_path=${name}` });
  await client.connect();
  const store = new PostgresArtifactStore(pgConnection(client));
  const sessions = Array.from({ length: 5 }, (_, i) => {
    const s = new Session({ sessionId: `c${i}` });
    s.record("user_input", `hello ${i}`);
    return s;
  });
  await Promise.all(sessions.map((s) => store.saveSession(s)));
  assert.deepEqual(await store.listSessions(), ["c0", "c1", "c2", "c3", "c4"]);
  await client.end();
  await assert.rejects(store.listSessions(), (e) => e.code === "STORE_FAILED");
  assert.throws(() => pgConnection({}), (e) => e.code === "INVALID_ARGUMENT");
  assert.throws(() => new PostgresArtifactStore({}), (e) => e.code === "INVALID_ARGUMENT");
});

test("a writer whose connection is killed mid-transaction leaves no lock and no partial save", async () => {
  const { pool, another } = await schema("kill");
  const store = new PostgresArtifactStore(pgConnection(pool));
  const s = new Session({ sessionId: "k" });
  s.record("user_input", "saved");
  await store.saveSession(s);
  // A doomed writer: its batch stops after moving the head, holding the row lock.
  const doomed = another({ max: 1 });
  // The killed connection's client reports its end to the pool.
  doomed.on("error", () => {});
  let pid;
  const stalled = {
    query: (sql, params) => pgConnection(doomed).query(sql, params),
    async batch(statements) {
      const client = await doomed.connect();
      // The kill ends this connection: its error is expected, whenever it lands.
      client.on("error", () => {});
      const backend = (await client.query("SELECT pg_backend_pid() AS pid")).rows[0].pid;
      await client.query("BEGIN");
      await client.query({ text: statements[0].sql, values: statements[0].params });
      client.release();
      // Killed only now, with the head's row locked (a kill before the
      // release once surfaced as an uncaught error of the checked-out client).
      pid = backend;
      await new Promise(() => {}); // never commits
    },
  };
  const copy = await store.loadSession("k");
  copy.record("user_input", "never saved");
  new PostgresArtifactStore(stalled).saveSession(copy).catch(() => {});
  while (pid === undefined) await new Promise((r) => setTimeout(r, 10));
  await pool.query("SELECT pg_terminate_backend($1)", [pid]);
  s.record("user_input", "after the kill");
  assert.deepEqual(await store.saveSession(s), { eventsWritten: 1, rewritten: false });
  assert.deepEqual(await savedTexts(store, "k"), ["saved", "after the kill"]);
  await doomed.end().catch(() => {});
});
