// KvArtifactStore over Redis (redisKv over an ioredis client) against a real
// redis-server (scripts/with-servers.sh starts one with maxmemory-policy
// noeviction): the store conformance suite, putIf as an atomic
// compare-and-set under racing clients, two writers and session.sync with
// four writers through four connections.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import * as lib from "agent-context-compiler";
import { BEHAVIOURS, runStoreSuite } from "../conformance/store_suite.mjs";
import { syncedLog, syncingWriter, twoWriters } from "../conformance/writers.mjs";
import { redisClient } from "./servers.mjs";

const { KvArtifactStore, redisKv } = lib;
const clients = [];
after(async () => {
  for (const c of clients) await c.quit();
});
function connect() {
  const c = redisClient();
  clients.push(c.client);
  return c;
}

test("the server does not evict keys", async () => {
  const { client } = connect();
  assert.deepEqual(await client.config("GET", "maxmemory-policy"), ["maxmemory-policy", "noeviction"]);
});

test("store conformance: KvArtifactStore over redisKv", async (t) => {
  const { client } = connect();
  const prefixes = new Map();
  let n = 0;
  const backend = {
    async make() {
      const prefix = `conf${n++}:`;
      const store = new KvArtifactStore(redisKv(client), { prefix });
      prefixes.set(store, prefix);
      return store;
    },
    async corrupt(store, id) {
      const keys = (await client.keys(`${prefixes.get(store)}a/${id}*`)).sort();
      const key = keys[keys.length - 1];
      const value = await client.getBuffer(key);
      value[value.length - 1] ^= 1;
      await client.set(key, value);
    },
    largeSize: 3 << 20,
  };
  const results = await runStoreSuite(lib, backend);
  assert.equal(results.length, BEHAVIOURS.length);
  for (const r of results) await t.test(r.name, () => assert.ok(r.ok, r.error));
});

test("putIf is a compare-and-set: binary values, absent keys, one winner among racing clients", async () => {
  const { prefix } = connect();
  const kvs = Array.from({ length: 6 }, () => redisKv(connect().client));
  const key = `${prefix}head`;
  const bytes = (...b) => new Uint8Array(b);
  assert.equal(await kvs[0].putIf(key, bytes(0, 255, 10), null), true);
  assert.equal(await kvs[1].putIf(key, bytes(1), null), false, "present: not absent");
  assert.equal(await kvs[1].putIf(key, bytes(1), bytes(0, 255)), false, "a prefix is not equal");
  assert.deepEqual([...(await kvs[0].get(key))], [0, 255, 10]);
  for (let round = 0; round < 20; round++) {
    const current = await kvs[0].get(key);
    const wins = await Promise.all(kvs.map((kv, i) => kv.putIf(key, bytes(round, i), current)));
    assert.equal(wins.filter(Boolean).length, 1, `round ${round}`);
  }
  assert.deepEqual(await kvs[0].list({ prefix: `${prefix}he` }), [key]);
  assert.deepEqual(await kvs[0].list({ prefix: `${prefix}*` }), [], "glob characters in a prefix are literal");
  assert.throws(() => redisKv({ get() {} }), (e) => e.code === "INVALID_ARGUMENT");
});

test("two writers through two connections: a stale save rejects whole, racing saves keep every event", async () => {
  const { client, prefix } = connect();
  const other = connect().client;
  const seen = await twoWriters(lib, [new KvArtifactStore(redisKv(client), { prefix }), new KvArtifactStore(redisKv(other), { prefix, chunkBytes: 1024 })], { count: 12 });
  assert.equal(seen.acked, 24);
  assert.ok(seen.conflicts > 0, "the writers raced");
});

test("session.sync: four writers through four connections keep every event once in one order", async () => {
  const { prefix } = connect();
  const stores = Array.from({ length: 4 }, () => new KvArtifactStore(redisKv(connect().client), { prefix }));
  const runs = await Promise.all(stores.map((store, w) => syncingWriter(lib, store, "shared", `w${w}`, 15)));
  const seen = await syncedLog(stores[0], "shared");
  assert.deepEqual([...seen.texts].sort(), runs.flatMap((r) => r.acked).sort(), "each event once");
  assert.ok(seen.paired, "a turn stays together");
  assert.ok(runs.some((r) => r.tries > 15), "the writers raced");
  assert.deepEqual((await syncedLog(stores[2], "shared")).ids, seen.ids, "every reader sees one order");
});
