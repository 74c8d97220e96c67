// `session.sync`'s lease (src/session/lease.rs) on every backend of the
// package that keeps one (SQLite, PostgreSQL, Redis, a directory), scripted:
// the writer under test saves through a store whose head compare-and-set
// (the SQL batch moving the head, the KV's putIf, the directory's exclusive
// create) lets a rival save first, every time. Without the lease it would
// lose every try and give up; with it, it loses two, takes the lease, and
// its third try goes through while the rival's save between writes nothing.
// A lease expires by the store's own clock (the database's, Redis's PX, the
// lease file's time). Also per backend: a direct saveSession tells the
// session what the store holds (its saved prefix). The rows of the Rust
// scripted tests (tests/sync_lease.rs) over the stores of the npm package.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as lib from "agent-context-compiler";
import { nodeFiles } from "../../js/files.js";
import { pgSchema, redisClient } from "./servers.mjs";

const { Session } = lib;
let SQL;
const cleanups = [];
before(async () => {
  SQL = await createRequire(import.meta.url)("sql.js")();
});
after(async () => {
  for (const c of cleanups) await c();
});

/** Whether a write moves a head to save (not to take a lease). */
const savesHead = (text) => !text.includes('"lease":');
const decoder = new TextDecoder();

/** A SQL backend over `raw`: the scripted store's batches moving a head to save wait for the script. */
function scriptedSql(Store, raw) {
  return {
    plain: () => new Store(raw),
    scripted: (script) =>
      new Store({
        query: (sql, params) => raw.query(sql, params),
        async batch(statements) {
          if (statements.some((s) => s.sql.includes("UPDATE acc_sessions SET event_count"))) await script.before();
          return raw.batch(statements);
        },
      }),
  };
}

/**
 * A backend: `scripted(script)` a store for the writer under test whose head
 * compare-and-sets wait for `script.before()`; `plain()` another store
 * over the same data.
 */
const BACKENDS = {
  async sqlite() {
    return scriptedSql(lib.SqliteArtifactStore, lib.sqlConnection(new SQL.Database()));
  },
  async pg() {
    const s = await pgSchema("lease");
    cleanups.push(() => s.drop());
    return scriptedSql(lib.PostgresArtifactStore, lib.pgConnection(s.pool));
  },
  async redis() {
    const { client, prefix } = redisClient();
    cleanups.push(() => client.quit());
    const kv = lib.redisKv(client);
    return {
      plain: () => new lib.KvArtifactStore(kv, { prefix }),
      scripted: (script) =>
        new lib.KvArtifactStore(
          {
            ...kv,
            async putIf(key, value, expected) {
              if (savesHead(decoder.decode(value))) await script.before();
              return kv.putIf(key, value, expected);
            },
          },
          { prefix },
        ),
    };
  },
  async files() {
    const dir = mkdtempSync(join(tmpdir(), "acc-lease-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const files = nodeFiles(dir);
    return {
      plain: () => new lib.FsArtifactStore({ baseDir: dir }),
      scripted: (script) =>
        new lib.FsArtifactStore({
          baseDir: dir,
          files: {
            ...files,
            async createNew(path, bytes) {
              if (savesHead(decoder.decode(bytes))) await script.before();
              return files.createNew(path, bytes);
            },
          },
        }),
    };
  },
};

const texts = (session) => JSON.parse(session.exportJson()).events.map((e) => e.data);

for (const [name, make] of Object.entries(BACKENDS)) {
  test(`${name}: a writer that lost twice takes the lease and cannot lose its next try`, async () => {
    const backend = await make();
    const plain = backend.plain();
    const first = new Session({ sessionId: "s" });
    first.record("user_input", "first");
    await plain.saveSession(first);
    const rival = { saved: 0, refused: 0 };
    const script = {
      async before() {
        const s = await plain.loadSession("s");
        s.record("user_input", `rival-${rival.saved + rival.refused}`);
        try {
          await plain.saveSession(s);
          rival.saved++;
        } catch (e) {
          if (e?.code !== "STORE_CONFLICT") throw e;
          assert.match(e.message, /leased/);
          rival.refused++;
        }
      },
    };
    const store = backend.scripted(script);
    const mine = await store.loadSession("s");
    mine.record("user_input", "mine");
    const report = await mine.sync(store);
    assert.equal(report.tries, 3, "two lost, then the leased try");
    assert.deepEqual(rival, { saved: 2, refused: 1 }, "the rival respected the lease");
    assert.deepEqual(texts(await plain.loadSession("s")), ["first", "rival-0", "rival-1", "mine"]);
    // The holder's save ended the lease: a plain save goes through.
    const after = await plain.loadSession("s");
    after.record("user_input", "after");
    await plain.saveSession(after);
  });

  test(`${name}: a lease turns other saves away and expires by the store's clock`, async () => {
    const plain = (await make()).plain();
    const base = new Session({ sessionId: "s" });
    base.record("user_input", "base");
    await plain.saveSession(base);
    const other = await plain.loadSession("s");
    other.record("user_input", "other");
    // A lease of 1.5 s: the three calls below run well within it, even on a busy machine.
    assert.equal((await plain.__takeLease("s", "holder", 1500)).outcome, "taken");
    assert.equal((await plain.__takeLease("s", "someone", 1500)).outcome, "held");
    assert.equal((await plain.__trySave(other, "someone")).outcome, "leased");
    await assert.rejects(plain.saveSession(other), (e) => e.code === "STORE_CONFLICT" && /leased/.test(e.message));
    await new Promise((r) => setTimeout(r, 1700));
    assert.deepEqual(await plain.saveSession(other), { eventsWritten: 1, rewritten: false });
    assert.deepEqual(texts(await plain.loadSession("s")), ["base", "other"]);
  });

  test(`${name}: waiting on another writer's lease is no try`, async () => {
    const plain = (await make()).plain();
    const base = new Session({ sessionId: "w" });
    base.record("user_input", "base");
    await plain.saveSession(base);
    const mine = await plain.loadSession("w");
    mine.record("user_input", "mine");
    assert.equal((await plain.__takeLease("w", "holder", 150)).outcome, "taken");
    const report = await mine.sync(plain, { maxTries: 1 });
    assert.equal(report.tries, 1);
    assert.deepEqual(texts(await plain.loadSession("w")), ["base", "mine"]);
  });

  test(`${name}: a direct saveSession updates the session's saved prefix`, async () => {
    const plain = (await make()).plain();
    const s = new Session({ sessionId: "p" });
    s.record("user_input", "one");
    s.record("user_input", "two");
    await plain.saveSession(s);
    assert.equal(s.__savedPrefix()[0], 2);
    s.record("user_input", "three");
    await plain.saveSession(s);
    assert.equal(s.__savedPrefix()[0], 3);
  });
}
