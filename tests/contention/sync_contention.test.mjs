// `session.sync` under contention, with its default tries (8): writer
// processes record 60 events each into the same two sessions through one
// backend (a directory, PostgreSQL, Redis), syncing a session once three
// of its events are unsaved (tests/js/children/sync_writer.mjs). A sync
// that lost two saves takes the session's lease (src/session/lease.rs), so
// its third try cannot lose: six writers, five runs per backend, and
// sixteen writers, one run: no sync gives up and none takes more than 5
// tries (3 measured on this 2-core machine under a load of 13: two lost,
// then the leased one; a fourth or fifth try only when a lease expired, its
// holder stalled for its 2 seconds). Before the lease, on the same machine:
// about 1 in 3,000 syncs gave up on PostgreSQL and Redis and 1 in 300 on a
// directory with six writers syncing every three events (1 in 100 syncing
// after each, bench/sync_contention.mjs); 2-5 % with sixteen, tries up to 8.
// Nothing acknowledged is lost, nothing saved twice.
//
// Timing-sensitive: scripts/test.sh runs it alone, once the other stages
// are done, not beside the cargo builds.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as lib from "agent-context-compiler";
import Redis from "ioredis";
import { pgSchema, serverUrl } from "../js/servers.mjs";
import { contend } from "../js/contention.mjs";

const cleanups = [];
after(async () => {
  for (const c of cleanups) await c();
});

/** A fresh place on `backend` for one run, and the stores to read it back. */
async function place(backend, run) {
  if (backend === "files") {
    const dir = mkdtempSync(join(tmpdir(), "acc-contention-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return { where: dir, open: async () => new lib.FsArtifactStore({ baseDir: dir }) };
  }
  if (backend === "redis") {
    const prefix = `contention${process.pid}_${run}:`;
    return {
      where: `${serverUrl("ACC_REDIS_URL")}#${prefix}`,
      open: async () => {
        const client = new Redis(serverUrl("ACC_REDIS_URL"));
        cleanups.push(() => client.quit());
        return new lib.KvArtifactStore(lib.redisKv(client), { prefix });
      },
    };
  }
  const s = await pgSchema(`contention${run}`);
  cleanups.push(() => s.drop());
  const url = new URL(serverUrl("ACC_PG_URL"));
  url.searchParams.set("options", `-c search_path=${s.schema}`);
  return { where: url.toString(), open: async () => new lib.PostgresArtifactStore(lib.pgConnection(s.pool)) };
}

/** Every acknowledged event saved, none twice. */
async function checkSaved(store, acked) {
  const saved = [];
  for (const id of ["s0", "s1"]) saved.push(...JSON.parse((await store.loadSession(id)).exportJson()).events.map((e) => e.data));
  assert.equal(new Set(saved).size, saved.length, "no event saved twice");
  const kept = new Set(saved);
  assert.deepEqual(acked.filter((t) => !kept.has(t)), [], "acknowledged events lost");
}

let runs = 0;
async function contended(backend, writers, every, count) {
  const syncs = { tries: [], gaveUp: 0 };
  for (let r = 0; r < count; r++) {
    const { where, open } = await place(backend, runs++);
    const result = await contend(backend, where, { writers, events: 60, every, seed: r + 1 });
    await checkSaved(await open(), result.acked);
    syncs.tries.push(...result.tries);
    syncs.gaveUp += result.gaveUp;
  }
  return syncs;
}

/** The most tries a sync takes: 3, or more once a lease outlived its holder's stall. */
const MOST_TRIES = 5;

for (const backend of ["pg", "redis", "files"]) {
  for (const [writers, every, runs] of [[6, 3, 5], [16, 1, 1]]) {
    test(`${writers} writers, ${runs} run(s), over ${backend}: no sync gives up, none takes more than ${MOST_TRIES} tries`, async () => {
      const r = await contended(backend, writers, every, runs);
      assert.equal(r.gaveUp, 0, `${r.gaveUp} of ${r.tries.length + r.gaveUp} syncs gave up`);
      assert.ok(Math.max(...r.tries) <= MOST_TRIES, `a sync took ${Math.max(...r.tries)} tries`);
    });
  }
}
