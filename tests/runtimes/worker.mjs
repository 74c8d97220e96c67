// workerd: the worker as wrangler builds it (esbuild, the package's `.wasm`
// left as a module of its own), the web entry initialised with that module,
// storage in a Durable Object's storage (values up to 128 KiB). `workerd
// test` runs `test()`, which asks the Durable Object to run the workload.
import * as lib from "agent-context-compiler";
import wasm from "agent-context-compiler/context_compiler.wasm";
import storesWasm from "agent-context-compiler/stores.wasm";
import { workload } from "./workload.mjs";

lib.initSync({ main: wasm, stores: storesWasm });

/** The Durable Object whose storage holds the artifacts and the session. */
export class WorkloadStore {
  constructor(state) {
    this.storage = state.storage;
  }

  async fetch() {
    const storage = this.storage;
    const kv = {
      get: async (k) => (await storage.get(k)) ?? null,
      put: (k, v) => storage.put(k, v),
      delete: (k) => storage.delete(k),
      list: async ({ prefix }) => [...(await storage.list({ prefix })).keys()],
    };
    try {
      return Response.json(await workload(lib, kv, 128 * 1024));
    } catch (e) {
      return new Response(`${e.code ?? "Error"}: ${e.message}\n${e.stack}`, { status: 500 });
    }
  }
}

export default {
  async test(_controller, env) {
    const store = env.STORE.get(env.STORE.idFromName("workload"));
    const response = await store.fetch("http://workload/");
    const body = await response.text();
    if (!response.ok) throw new Error(body);
    console.log(`WORKLOAD ${body}`);
  },
};
