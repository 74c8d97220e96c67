// `session.sync` under contention: writer processes (6, then 16) each record
// 60 events into the same two sessions through one backend (a directory,
// PostgreSQL, Redis) and sync after each with the default 8 tries; a sync
// that gives up (STORE_CONFLICT) is counted, its events saved by the next.
// Prints the tries a sync took (p50 / p95 / max) and the share that gave
// up, beside the same figures measured on this machine before syncs
// reloaded only what was new (BEFORE below, issue 48).
// Needs ACC_PG_URL and ACC_REDIS_URL (scripts/with-servers.sh, run by
// `npm run bench`).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { contend } from "../tests/js/contention.mjs";

const EVENTS = 60;
const RUNS = { 6: 3, 16: 1 };

/**
 * Measured at d35d3f6 (every sync reloaded the whole saved log), this
 * bench, same machine: "p50 / p95 / max tries, give-ups of syncs".
 */
const BEFORE = {
  "files 6": "2 / 5 / 8, 13 of 1,080",
  "files 16": "3 / 7 / 8, 101 of 961",
  "pg 6": "2 / 5 / 8, 1 of 1,080",
  "pg 16": "2 / 7 / 8, 39 of 960",
  "redis 6": "2 / 5 / 8, 3 of 1,080",
  "redis 16": "2 / 7 / 8, 51 of 960",
};

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

/** A fresh place for one run on `backend`, and how to remove it. */
async function place(backend, run) {
  if (backend === "files") {
    const dir = mkdtempSync(join(tmpdir(), "acc-contention-"));
    return { where: dir, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  if (backend === "redis") return { where: `${process.env.ACC_REDIS_URL}#contention${process.pid}_${run}:`, drop: async () => {} };
  const schema = `bench_contention_${run}`;
  const admin = new pg.Client({ connectionString: process.env.ACC_PG_URL });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const url = new URL(process.env.ACC_PG_URL);
  url.searchParams.set("options", `-c search_path=${schema}`);
  return { where: url.toString(), drop: async () => {} };
}

export async function syncContentionBench() {
  if (!process.env.ACC_PG_URL || !process.env.ACC_REDIS_URL) throw new Error("ACC_PG_URL and ACC_REDIS_URL are not set: run through `npm run bench` (scripts/with-servers.sh)");
  console.log(`\nsession.sync under contention: writer processes, ${EVENTS} events each into 2 sessions, a sync after each, default tries (8)`);
  let run = 0;
  for (const backend of ["files", "pg", "redis"]) {
    for (const writers of [6, 16]) {
      const tries = [];
      let gaveUp = 0;
      for (let r = 0; r < RUNS[writers]; r++) {
        const { where, drop } = await place(backend, run++);
        const result = await contend(backend, where, { writers, events: EVENTS, seed: r + 1 });
        await drop();
        tries.push(...result.tries);
        gaveUp += result.gaveUp;
      }
      const syncs = tries.length + gaveUp;
      const now = `${pct(tries, 50)} / ${pct(tries, 95)} / ${Math.max(...tries)}, ${gaveUp} of ${syncs.toLocaleString("en")}`;
      console.log(`  ${backend.padEnd(5)} ${String(writers).padStart(2)} writers ×${RUNS[writers]}: tries p50 / p95 / max, give-ups ${now.padEnd(24)} (${((100 * gaveUp) / syncs).toFixed(2)} %)   before: ${BEFORE[`${backend} ${writers}`]}`);
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await syncContentionBench();
