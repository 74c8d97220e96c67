// Run by multi_writer.test.mjs, six at once over one backend:
// `node sync_writer.mjs <backend> <where> <name> <count> <sessions> <seed>`
// holds one session per id (s0, s1, ...), records `count` user inputs into
// them in turn with random delays, and syncs after each, printing
// "saving <text>" before the sync and "acked <text>" once it resolved
// (writeSync: a line printed is on its way even if the process is killed
// right after). Backends: pg <url>, redis <url>, files <dir>.
import { writeSync } from "node:fs";
import * as lib from "agent-context-compiler";

const [backend, where, name, count, sessionCount, seedText] = process.argv.slice(2);
let seed = Number(seedText);
const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);

async function openStore() {
  if (backend === "pg") {
    const { default: pg } = await import("pg");
    const pool = new pg.Pool({ connectionString: where, max: 2 });
    return { store: new lib.PostgresArtifactStore(lib.pgConnection(pool)), close: () => pool.end() };
  }
  if (backend === "redis") {
    const { default: Redis } = await import("ioredis");
    const [url, prefix] = where.split("#");
    const client = new Redis(url);
    return { store: new lib.KvArtifactStore(lib.redisKv(client), { prefix }), close: () => client.quit() };
  }
  return { store: new lib.FsArtifactStore({ baseDir: where }), close: async () => {} };
}

const { store, close } = await openStore();
const sessions = Array.from({ length: Number(sessionCount) }, (_, i) => new lib.Session({ sessionId: `s${i}` }));
for (let i = 0; i < Number(count); i++) {
  const session = sessions[i % sessions.length];
  const text = `${name}-${i}`;
  session.record("user_input", text);
  await new Promise((r) => setTimeout(r, random() * 8));
  writeSync(1, `saving ${text}\n`);
  await session.sync(store, { maxTries: 1000 });
  writeSync(1, `acked ${text}\n`);
}
await close();
