// A key-value store in files (one file a key, its name the key URI-encoded),
// for the Node runtime tests: the workload's storage in Node.
import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A `KvArtifactStore` adapter over a new temporary directory. */
export async function fileKv() {
  const dir = await mkdtemp(join(tmpdir(), "acc-runtime-kv-"));
  const path = (k) => join(dir, encodeURIComponent(k));
  return {
    async get(k) {
      try {
        return new Uint8Array(await readFile(path(k)));
      } catch (e) {
        if (e.code === "ENOENT") return null;
        throw e;
      }
    },
    put: (k, v) => writeFile(path(k), v),
    delete: (k) => rm(path(k), { force: true }),
    list: async ({ prefix }) => (await readdir(dir)).map(decodeURIComponent).filter((k) => k.startsWith(prefix)),
  };
}
