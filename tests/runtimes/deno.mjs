// Deno: the package through npm:, storage in Deno KV. Without arguments
// the main entry (Deno resolves it to the Node entry, which initialises
// itself); with `web`, the web entry (`init()` reads the .wasm beside its
// glue). Run with `deno run --allow-read --allow-write --unstable-kv`, as the
// README says (--allow-write only for this test's temporary KV file).
import { workload } from "./workload.mjs";
import { twoWriters } from "./writers.mjs";

const lib = Deno.args[0] === "web" ? await import("npm:agent-context-compiler/web") : await import("npm:agent-context-compiler");
await lib.init(); // every module (nothing to do for the main entry)

const dir = await Deno.makeTempDir();
const kv = await Deno.openKv(`${dir}/kv.sqlite`);
const sameBytes = (a, b) => (a == null || b == null ? a == b : a.length === b.length && a.every((x, i) => x === b[i]));
const adapter = {
  get: async (k) => (await kv.get(["acc", k])).value,
  put: (k, v) => kv.set(["acc", k], v),
  delete: (k) => kv.delete(["acc", k]),
  // The recipe in docs/storage.md: Deno KV's atomic check of the versionstamp read.
  async putIf(k, v, expected) {
    const current = await kv.get(["acc", k]);
    if (!sameBytes(current.value, expected)) return false;
    return (await kv.atomic().check(current).set(["acc", k], v).commit()).ok;
  },
  async list({ prefix }) {
    const keys = [];
    for await (const e of kv.list({ prefix: ["acc"] })) {
      if (e.key[1].startsWith(prefix)) keys.push(e.key[1]);
    }
    return keys;
  },
};
const result = await workload(lib, adapter, 65536);
// Two stores over the one Deno KV: a stale save rejects whole, racing saves keep every event.
const writers = await twoWriters(lib, [new lib.KvArtifactStore(adapter), new lib.KvArtifactStore(adapter)], { count: 8 });
console.log(JSON.stringify({ ...result, writers: { acked: writers.acked, raced: writers.conflicts > 0 } }));
kv.close();
