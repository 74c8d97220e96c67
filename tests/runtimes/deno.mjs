// Deno: the package through npm:, storage in Deno KV. Without arguments
// the main entry (Deno resolves it to the Node entry, which initialises
// itself); with `web`, the web entry (`init()` reads the .wasm beside its
// glue). Run with `deno run --allow-read --allow-write --unstable-kv`, as the
// README says (--allow-write only for this test's temporary KV file).
import { workload } from "./workload.mjs";

const lib = Deno.args[0] === "web" ? await import("npm:agent-context-compiler/web") : await import("npm:agent-context-compiler");
await lib.init(); // nothing to do for the main entry
await lib.initStores(); // the KV store's module (the main entry loads it by itself)

const dir = await Deno.makeTempDir();
const kv = await Deno.openKv(`${dir}/kv.sqlite`);
const adapter = {
  get: async (k) => (await kv.get(["acc", k])).value,
  put: (k, v) => kv.set(["acc", k], v),
  delete: (k) => kv.delete(["acc", k]),
  async list({ prefix }) {
    const keys = [];
    for await (const e of kv.list({ prefix: ["acc"] })) {
      if (e.key[1].startsWith(prefix)) keys.push(e.key[1]);
    }
    return keys;
  },
};
console.log(JSON.stringify(await workload(lib, adapter, 65536)));
kv.close();
