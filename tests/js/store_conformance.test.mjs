// The store conformance suite in Node: the memory store and the KV store over
// Maps (no limit, Deno KV's 64 KiB limit, tiny chunks, ArrayBuffer values).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as lib from "agent-context-compiler";
import { BEHAVIOURS, runStoreSuite } from "../conformance/store_suite.mjs";
import { corruptInMap, mapKv } from "../conformance/kv_adapters.mjs";

const fixture = JSON.parse(readFileSync(new URL("../fixtures/store_conformance.json", import.meta.url)));

test("the JS suite implements exactly the fixture's behaviours", () => {
  assert.deepEqual(BEHAVIOURS, fixture.behaviours.map((b) => b.name));
});

const backends = {
  memory: {
    make: async () => new lib.MemoryArtifactStore(),
    async corrupt(store, id) {
      const all = store.snapshot();
      all.find((a) => a.handle.artifactId === id).content[0] ^= 1;
      store.restore(all);
    },
    largeSize: 3 << 20,
  },
  "kv over a Map": kvBackend({}, {}),
  "kv with Deno's 64 KiB value limit": kvBackend({ maxValueBytes: 65536 }, { chunkBytes: 65536 }),
  "kv with 1 KiB chunks returning ArrayBuffers": kvBackend(
    { maxValueBytes: 1024, returns: "arraybuffer" },
    { chunkBytes: 1024, prefix: "p/" },
  ),
};

function kvBackend(kvOptions, storeOptions) {
  return {
    async make() {
      const kv = mapKv(kvOptions);
      const store = new lib.KvArtifactStore(kv, storeOptions);
      store.kvForTest = kv;
      return store;
    },
    async corrupt(store, id) {
      corruptInMap(store.kvForTest.map, id, storeOptions.prefix ?? "");
    },
    largeSize: (storeOptions.chunkBytes ?? 65536) * 40 + 123,
  };
}

for (const [name, backend] of Object.entries(backends)) {
  test(`store conformance: ${name}`, async (t) => {
    const results = await runStoreSuite(lib, backend);
    assert.equal(results.length, BEHAVIOURS.length);
    for (const r of results) {
      await t.test(r.name, () => assert.ok(r.ok, r.error));
    }
  });
}
