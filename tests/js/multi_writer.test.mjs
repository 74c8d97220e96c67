// Many workers, one session, across processes: six worker processes each
// record 60 events into the same two sessions through one backend
// (PostgreSQL, Redis, a directory), syncing after each with random delays;
// one is killed (SIGKILL) in the middle of a save, before its last step. Afterwards every
// acknowledged event is saved exactly once, no event twice, every reader
// sees the same order, and both sessions load.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as lib from "agent-context-compiler";
import pg from "pg";
import Redis from "ioredis";
import { pgSchema, serverUrl } from "./servers.mjs";
import { spawnWriter } from "./contention.mjs";

const WORKERS = 6;
const EVENTS = 60;
const SESSIONS = 2;
const cleanups = [];
after(async () => {
  for (const c of cleanups) await c();
});

const worker = (backend, where, name, seed, role = "worker") => spawnWriter(backend, where, name, { events: EVENTS, sessions: SESSIONS, seed, role });

async function run(backend, where, openStores) {
  const workers = Array.from({ length: WORKERS }, (_, w) => worker(backend, where, `w${w}`, 1000 + w, w === 0 ? "victim" : "worker"));
  // Worker 0 pauses 40 ms before the last step of each save (the COMMIT,
  // the head's compare-and-set, the head file's create): it is killed in
  // such a pause, its 15th, with that save's other writes done.
  const victim = workers[0];
  let writes = 0;
  victim.onLine = (line) => {
    if (line === "writing" && ++writes === 15) setTimeout(() => victim.proc.kill("SIGKILL"), Math.random() * 20);
  };
  const exits = await Promise.all(workers.map((w) => w.done));
  assert.equal(exits[0].signal, "SIGKILL", victim.err);
  exits.slice(1).forEach((e, i) => assert.equal(e.code, 0, workers[i + 1].err));
  const acked = workers.flatMap((w) => w.lines.filter((l) => l.startsWith("acked ")).map((l) => l.slice(6)));
  assert.equal(acked.length, (WORKERS - 1) * EVENTS + victim.lines.filter((l) => l.startsWith("acked ")).length);
  assert.equal(victim.lines.at(-1), "writing", "killed in the middle of a save");
  const [a, b] = await openStores();
  const saved = [];
  for (let i = 0; i < SESSIONS; i++) {
    const one = JSON.parse((await a.loadSession(`s${i}`)).exportJson()).events;
    const two = JSON.parse((await b.loadSession(`s${i}`)).exportJson()).events;
    assert.deepEqual(two.map((e) => e.eventId), one.map((e) => e.eventId), `s${i}: every reader sees one order`);
    assert.ok(one.every((e, j) => j === 0 || one[j - 1].timestamp <= e.timestamp), `s${i}: times never decrease`);
    saved.push(...one.map((e) => e.data));
  }
  assert.equal(new Set(saved).size, saved.length, "no event saved twice");
  const missing = acked.filter((t) => !saved.includes(t));
  assert.deepEqual(missing, [], "acknowledged events lost");
  return { acked: acked.length, saved: saved.length };
}

test("six processes, one killed mid-save, over PostgreSQL", async () => {
  const s = await pgSchema("procs");
  cleanups.push(() => s.drop());
  // The schema is created before the workers start; they migrate nothing.
  const url = new URL(serverUrl("ACC_PG_URL"));
  url.searchParams.set("options", `-c search_path=${s.schema}`);
  const result = await run("pg", url.toString(), async () => {
    const other = s.another();
    cleanups.push(() => other.end());
    return [new lib.PostgresArtifactStore(lib.pgConnection(s.pool)), new lib.PostgresArtifactStore(lib.pgConnection(other))];
  });
  assert.ok(result.saved >= result.acked);
});

test("six processes, one killed mid-save, over Redis", async () => {
  const prefix = `procs${process.pid}:`;
  const result = await run("redis", `${serverUrl("ACC_REDIS_URL")}#${prefix}`, async () => {
    const clients = [new Redis(serverUrl("ACC_REDIS_URL")), new Redis(serverUrl("ACC_REDIS_URL"))];
    cleanups.push(() => Promise.all(clients.map((c) => c.quit())));
    return clients.map((c) => new lib.KvArtifactStore(lib.redisKv(c), { prefix }));
  });
  assert.ok(result.saved >= result.acked);
});

test("six processes, one killed mid-save, over one directory", async () => {
  const baseDir = mkdtempSync(join(tmpdir(), "acc-procs-"));
  cleanups.push(() => rmSync(baseDir, { recursive: true, force: true }));
  const result = await run("files", baseDir, async () => [new lib.FsArtifactStore({ baseDir }), new lib.FsArtifactStore({ baseDir })]);
  assert.ok(result.saved >= result.acked);
});
