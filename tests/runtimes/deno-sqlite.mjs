// Deno: SqliteArtifactStore over Deno's node:sqlite (a database file), running
// the store conformance suite (store_suite.mjs, copied beside this file) and
// a save and load through a second connection, as after a restart. Run with
// `deno run --allow-read --allow-write`.
import { DatabaseSync } from "node:sqlite";
import * as lib from "npm:agent-context-compiler";
import { runStoreSuite } from "./store_suite.mjs";

const dir = await Deno.makeTempDir();
let n = 0;
const dbs = new WeakMap();
const results = await runStoreSuite(lib, {
  async make() {
    const db = new DatabaseSync(`${dir}/suite-${n++}.db`);
    const store = new lib.SqliteArtifactStore(lib.sqlConnection(db));
    dbs.set(store, db);
    return store;
  },
  async corrupt(store, id) {
    const db = dbs.get(store);
    const { content } = db.prepare("SELECT content FROM acc_artifacts WHERE artifact_id = ?").get(id);
    content[content.length - 1] ^= 1;
    db.prepare("UPDATE acc_artifacts SET content = ? WHERE artifact_id = ?").run(content, id);
  },
  largeSize: 3 << 20,
});

const session = new lib.Session({ sessionId: "deno-sqlite" });
session.record("user_input", "Why did the nightly job fail?");
await new lib.SqliteArtifactStore(lib.sqlConnection(new DatabaseSync(`${dir}/app.db`))).saveSession(session);
const reopened = new lib.SqliteArtifactStore(lib.sqlConnection(new DatabaseSync(`${dir}/app.db`)));
const loaded = await reopened.loadSession("deno-sqlite");

console.log(JSON.stringify({
  failed: results.filter((r) => !r.ok).map((r) => `${r.name}: ${r.error}`),
  passed: results.filter((r) => r.ok).length,
  sameSession: loaded.exportJson() === session.exportJson(),
}));
await Deno.remove(dir, { recursive: true });
