// The store conformance suite in Node: the memory store and the KV store over
// Maps (no limit, Deno KV's 64 KiB limit, tiny chunks, ArrayBuffer values).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as lib from "agent-context-compiler";
import { BEHAVIOURS, runStoreSuite } from "../conformance/store_suite.mjs";
import { kvBackend, memoryBackend } from "../conformance/kv_adapters.mjs";

const fixture = JSON.parse(readFileSync(new URL("../fixtures/store_conformance.json", import.meta.url)));

test("the JS suite implements exactly the fixture's behaviours", () => {
  assert.deepEqual(BEHAVIOURS, fixture.behaviours.map((b) => b.name));
});

const backends = {
  memory: memoryBackend(lib),
  "kv over a Map": kvBackend(lib),
  "kv over a Map without putIf (single writer)": kvBackend(lib, { conditional: false }),
  "kv with Deno's 64 KiB value limit": kvBackend(lib, { maxValueBytes: 65536 }, { chunkBytes: 65536 }),
  "kv with 1 KiB chunks returning ArrayBuffers": kvBackend(
    lib,
    { maxValueBytes: 1024, returns: "arraybuffer" },
    { chunkBytes: 1024, prefix: "p/" },
  ),
};

for (const [name, backend] of Object.entries(backends)) {
  test(`store conformance: ${name}`, async (t) => {
    const results = await runStoreSuite(lib, backend);
    assert.equal(results.length, BEHAVIOURS.length);
    for (const r of results) {
      await t.test(r.name, () => assert.ok(r.ok, r.error));
    }
  });
}
