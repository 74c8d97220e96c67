// Run by multi_writer.test.mjs, six at once over one backend:
// `node sync_writer.mjs <backend> <where> <name> <count> <sessions> <seed> [victim]`
// holds one session per id (s0, s1, ...), records `count` user inputs into
// them in turn with random delays, and syncs after each, printing
// "saving <text>" before the sync and "acked <text>" once it resolved
// (writeSync: a line printed is on its way even if the process is killed
// right after). Backends: pg <url>, redis <url>, files <dir>. A victim
// prints "writing" and waits 40 ms before each save's last step (the
// COMMIT, the head's compare-and-set, the head file's exclusive create), so
// the test kills it in the middle of a save.
import { writeSync } from "node:fs";
import * as lib from "agent-context-compiler";
import { nodeFiles } from "../../../js/files.js";

const [backend, where, name, count, sessionCount, seedText, role] = process.argv.slice(2);
const victim = role === "victim";
/** A victim's pause before the last step of a save. */
const pause = async () => {
  if (!victim) return;
  writeSync(1, "writing\n");
  await new Promise((r) => setTimeout(r, 40));
};
let seed = Number(seedText);
const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);

async function openStore() {
  if (backend === "pg") {
    const { default: pg } = await import("pg");
    const pool = new pg.Pool({ connectionString: where, max: 2 });
    // The victim's clients pause before each COMMIT (pool.query connects
    // with a callback, and runs no COMMIT).
    const paused = new WeakSet();
    const connect = pool.connect.bind(pool);
    pool.connect = async (callback) => {
      if (callback) return connect(callback);
      const client = await connect();
      if (!paused.has(client)) {
        paused.add(client);
        const query = client.query.bind(client);
        client.query = async (q, ...rest) => (q === "COMMIT" && (await pause()), query(q, ...rest));
      }
      return client;
    };
    return { store: new lib.PostgresArtifactStore(lib.pgConnection(pool)), close: () => pool.end() };
  }
  if (backend === "redis") {
    const { default: Redis } = await import("ioredis");
    const [url, prefix] = where.split("#");
    const client = new Redis(url);
    const kv = lib.redisKv(client);
    const putIf = kv.putIf;
    kv.putIf = async (...args) => (await pause(), putIf(...args));
    return { store: new lib.KvArtifactStore(kv, { prefix }), close: () => client.quit() };
  }
  const files = nodeFiles(where);
  const createNew = files.createNew;
  files.createNew = async (...args) => (await pause(), createNew(...args));
  return { store: new lib.FsArtifactStore({ baseDir: where, files }), close: async () => {} };
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
