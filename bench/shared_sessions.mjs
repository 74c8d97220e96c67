// Many workers, one session: events per second saved (each writer records a
// turn, a user input and an assistant reply, and syncs) and loaded, with 1,
// 4 and 16 concurrent writers sharing 8 conversations, on PostgreSQL
// (PostgresArtifactStore, a pg pool per writer) and Redis (KvArtifactStore
// over redisKv, a connection per writer), beside LangGraph's PostgreSQL
// checkpointer saving the same turns to the same server (a checkpoint per
// turn holding the thread's messages; it has no merge, so racing writers
// fork threads and the latest checkpoint misses turns: printed as "kept").
// The writers are async tasks of one process, each on its own connections.
// Needs ACC_PG_URL and ACC_REDIS_URL (scripts/with-servers.sh, run by
// `npm run bench`).
import pg from "pg";
import Redis from "ioredis";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { KvArtifactStore, PostgresArtifactStore, Session, pgConnection, redisKv } from "agent-context-compiler";
import { prose, rng } from "./trace.mjs";

const CONVERSATIONS = 8;
const TURNS_PER_WRITER = { 1: 160, 4: 60, 16: 20 };
const WRITERS = [1, 4, 16];

/** The turns writer `w` records: [conversation, user text, reply text]. */
function turns(w, n) {
  const r = rng(1000 + w);
  return Array.from({ length: n }, (_, i) => [`c${(w + i) % CONVERSATIONS}`, prose(r, 300), prose(r, 600)]);
}

async function createSchema(url, name) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
  await c.query(`CREATE SCHEMA ${name}`);
  await c.end();
}

/** Our run: each writer holds a session per conversation and syncs after each turn. */
async function ours(makeStore, writers) {
  const stores = await Promise.all(Array.from({ length: writers }, (_, w) => makeStore(w)));
  const t0 = performance.now();
  const results = await Promise.all(stores.map(async ({ store }, w) => {
    const sessions = new Map();
    let tries = 0;
    let saves = 0;
    for (const [id, user, reply] of turns(w, TURNS_PER_WRITER[writers])) {
      if (!sessions.has(id)) sessions.set(id, new Session({ sessionId: id }));
      const s = sessions.get(id);
      s.record("user_input", user);
      s.record("assistant_output", reply);
      tries += (await s.sync(store, { maxTries: 1000 })).tries;
      saves++;
    }
    for (const s of sessions.values()) s.free();
    return { tries, saves };
  }));
  const saveMs = performance.now() - t0;
  const events = results.reduce((n, r) => n + r.saves * 2, 0);
  const retries = results.reduce((n, r) => n + r.tries - r.saves, 0);
  // Loading: every writer loads every conversation, concurrently.
  const t1 = performance.now();
  const loaded = await Promise.all(stores.flatMap(({ store }) => Array.from({ length: CONVERSATIONS }, async (_, c) => {
    const s = await store.loadSession(`c${c}`);
    const n = s?.eventLog.length ?? 0;
    s?.free();
    return n;
  })));
  const loadMs = performance.now() - t1;
  const kept = loaded.slice(0, CONVERSATIONS).reduce((a, b) => a + b, 0);
  for (const { close } of stores) await close();
  return { saved: events / (saveMs / 1000), loaded: loaded.reduce((a, b) => a + b, 0) / (loadMs / 1000), retries, kept, events };
}

/** LangGraph's checkpointer: read the thread's latest checkpoint, append the turn, put. */
async function langgraph(url, schema, writers) {
  const savers = await Promise.all(Array.from({ length: writers }, async () => {
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    return new PostgresSaver(pool, undefined, { schema });
  }));
  await savers[0].setup();
  const t0 = performance.now();
  let events = 0;
  await Promise.all(savers.map(async (saver, w) => {
    for (const [thread, user, reply] of turns(w, TURNS_PER_WRITER[writers])) {
      const config = { configurable: { thread_id: thread, checkpoint_ns: "" } };
      const latest = await saver.getTuple(config);
      const messages = latest?.checkpoint.channel_values.messages ?? [];
      const version = (latest?.checkpoint.channel_versions.messages ?? 0) + 1;
      const checkpoint = { ...emptyCheckpoint(), id: uuid6(-1), ts: new Date().toISOString() };
      checkpoint.channel_values = { messages: [...messages, { role: "user", content: user }, { role: "assistant", content: reply }] };
      checkpoint.channel_versions = { messages: version };
      await saver.put(latest?.config ?? config, checkpoint, { source: "loop", step: version, parents: {} }, { messages: version });
      events += 2;
    }
  }));
  const saveMs = performance.now() - t0;
  const t1 = performance.now();
  const loaded = await Promise.all(savers.flatMap((saver) => Array.from({ length: CONVERSATIONS }, async (_, c) => {
    const t = await saver.getTuple({ configurable: { thread_id: `c${c}`, checkpoint_ns: "" } });
    return t?.checkpoint.channel_values.messages?.length ?? 0;
  })));
  const loadMs = performance.now() - t1;
  const kept = loaded.slice(0, CONVERSATIONS).reduce((a, b) => a + b, 0);
  for (const s of savers) await s.end();
  return { saved: events / (saveMs / 1000), loaded: loaded.reduce((a, b) => a + b, 0) / (loadMs / 1000), retries: null, kept, events };
}

const rate = (x) => Math.round(x).toLocaleString("en");
const line = (name, r) => `    ${name.padEnd(44)} saved ${rate(r.saved).padStart(7)}/s  loaded ${rate(r.loaded).padStart(8)}/s  retries ${String(r.retries ?? "-").padStart(5)}  kept ${r.kept}/${r.events}`;

export async function sharedSessionsBench() {
  const pgUrl = process.env.ACC_PG_URL;
  const redisUrl = process.env.ACC_REDIS_URL;
  if (!pgUrl || !redisUrl) throw new Error("ACC_PG_URL and ACC_REDIS_URL are not set: run through `npm run bench` (scripts/with-servers.sh)");
  console.log(`\nmany writers, one session: ${CONVERSATIONS} conversations, each turn a user input (300 chars) and a reply (600), events per second`);
  for (const writers of WRITERS) {
    console.log(`  ${writers} concurrent writer${writers > 1 ? "s" : ""}`);
    const schema = `bench_ours_${writers}`;
    await createSchema(pgUrl, schema);
    const url = new URL(pgUrl);
    url.searchParams.set("options", `-c search_path=${schema}`);
    const onPg = await ours(async () => {
      const pool = new pg.Pool({ connectionString: url.toString(), max: 2 });
      return { store: new PostgresArtifactStore(pgConnection(pool)), close: () => pool.end() };
    }, writers);
    const prefix = `bench${writers}:${Date.now()}:`;
    const onRedis = await ours(async () => {
      const client = new Redis(redisUrl);
      return { store: new KvArtifactStore(redisKv(client), { prefix }), close: () => client.quit() };
    }, writers);
    const peerSchema = `bench_langgraph_${writers}`;
    await createSchema(pgUrl, peerSchema);
    const peer = await langgraph(pgUrl, peerSchema, writers);
    console.log(line("this library, PostgreSQL (session.sync)", onPg));
    console.log(line("this library, Redis (session.sync)", onRedis));
    console.log(line("LangGraph PostgresSaver (put per turn)", peer));
    console.log(`    ratio saved (ours on PostgreSQL / LangGraph): ${(onPg.saved / peer.saved).toFixed(2)}   loaded: ${(onPg.loaded / peer.loaded).toFixed(2)}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await sharedSessionsBench();
