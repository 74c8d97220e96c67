// Run by multi_writer.test.mjs, six at once over one backend:
// `node sync_writer.mjs <backend> <where> <name> <count> <sessions> <seed> [role] [maxTries] [every]`
// holds one session per id (s0, s1, ...), records `count` user inputs into
// them in turn with random delays, and syncs a session once `every`
// (default 1) of its events are unsaved, with `maxTries` (default 1000),
// printing "saving <text>" before the sync, "acked <text>" for each event
// it saved once it resolved (writeSync: a line printed is on its way even
// if the process is killed right after), and "tries <n>" or "gave up" for
// each sync. Events of a sync that gave up are saved by the next; a last
// sync saves what is left. Backends: pg <url>, redis <url>, files <dir>. A victim
// prints "writing" and waits 40 ms before each save's last step (the
// COMMIT, the head's compare-and-set, the head file's exclusive create), so
// the test kills it in the middle of a save.
import { writeSync } from "node:fs";
import * as lib from "agent-context-compiler";
import { nodeFiles } from "../../../js/files.js";

const [backend, where, name, count, sessionCount, seedText, role, maxTriesText, everyText] = process.argv.slice(2);
const maxTries = Number(maxTriesText ?? 1000);
const every = Number(everyText ?? 1);
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
/** Each session's events recorded and not yet saved. */
const unsaved = sessions.map(() => []);
async function sync(i, tries) {
  try {
    const report = await sessions[i].sync(store, { maxTries: tries });
    writeSync(1, `tries ${report.tries}\n`);
  } catch (e) {
    if (e?.code !== "STORE_CONFLICT") throw e;
    writeSync(1, "gave up\n");
    return;
  }
  for (const text of unsaved[i].splice(0)) writeSync(1, `acked ${text}\n`);
}
for (let i = 0; i < Number(count); i++) {
  const at = i % sessions.length;
  const text = `${name}-${i}`;
  sessions[at].record("user_input", text);
  unsaved[at].push(text);
  await new Promise((r) => setTimeout(r, random() * 8));
  if (unsaved[at].length < every) continue;
  writeSync(1, `saving ${text}\n`);
  await sync(at, maxTries);
}
for (let at = 0; at < sessions.length; at++) if (unsaved[at].length > 0) await sync(at, 1000);
await close();
