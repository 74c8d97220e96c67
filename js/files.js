// The FsArtifactStore's default file system in Node and Deno (both provide
// node:fs/promises): paths relative to the store's directory, each write to
// a temporary file beside its target, synced, then renamed over it; an
// exclusive create (a session head's next version) hard-links it instead.
//
// node:fs/promises is got when the first store opens its files, not on
// import: importing it loads Node's streams, 3–6 ms of a cold start.
// `process.getBuiltinModule` is in every Node the package supports and in Deno.
let fs;
let path;
const link = (...a) => fs.link(...a);
const mkdir = (...a) => fs.mkdir(...a);
const open = (...a) => fs.open(...a);
const readFile = (...a) => fs.readFile(...a);
const readdir = (...a) => fs.readdir(...a);
const rename = (...a) => fs.rename(...a);
const rm = (...a) => fs.rm(...a);
const stat = (...a) => fs.stat(...a);
const dirname = (p) => path.dirname(p);
const join = (...a) => path.join(...a);

let written = 0;

/** A unique temporary name beside `file`. */
function temporary(file) {
  const pid = globalThis.process?.pid ?? 0;
  return `${file}.tmp-${pid}-${written++}-${Math.random().toString(36).slice(2, 8)}`;
}

/** `bytes` in a new temporary file beside `file`, synced; its path. */
async function synced(file, bytes) {
  await mkdir(dirname(file), { recursive: true });
  const tmp = temporary(file);
  const handle = await open(tmp, "wx");
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } catch (e) {
    await handle.close();
    await rm(tmp, { force: true });
    throw e;
  }
  await handle.close();
  return tmp;
}

/** The file system under `baseDir`, as `FsArtifactStore` calls it. */
export function nodeFiles(baseDir) {
  fs ??= process.getBuiltinModule("node:fs/promises");
  path ??= process.getBuiltinModule("node:path");
  const root = path.resolve(baseDir);
  const full = (path) => join(root, ...path.split("/"));
  return {
    async read(path) {
      try {
        return await readFile(full(path));
      } catch (e) {
        if (e?.code === "ENOENT") return null;
        throw e;
      }
    },
    async write(path, bytes) {
      const file = full(path);
      const tmp = await synced(file, bytes);
      try {
        await rename(tmp, file);
      } catch (e) {
        await rm(tmp, { force: true });
        throw e;
      }
    },
    async createNew(path, bytes) {
      const file = full(path);
      const tmp = await synced(file, bytes);
      try {
        // A hard link fails when `file` exists, and shows it whole or not at all.
        await link(tmp, file);
        return true;
      } catch (e) {
        if (e?.code === "EEXIST") return false;
        throw e;
      } finally {
        await rm(tmp, { force: true });
      }
    },
    async remove(path) {
      await rm(full(path), { force: true });
    },
    // How long ago the file was written, by its modification time: a
    // session's lease file expires by it.
    async ageMs(path) {
      try {
        return Math.max(0, Date.now() - (await stat(full(path))).mtimeMs);
      } catch (e) {
        if (e?.code === "ENOENT") return null;
        throw e;
      }
    },
    async list(dir) {
      const out = [];
      const walk = async (relative) => {
        let entries;
        try {
          entries = await readdir(relative === "" ? root : full(relative), { withFileTypes: true });
        } catch (e) {
          if (e?.code === "ENOENT") return;
          throw e;
        }
        for (const entry of entries) {
          const child = relative === "" ? entry.name : `${relative}/${entry.name}`;
          if (entry.isDirectory()) await walk(child);
          else out.push(child);
        }
      };
      await walk(dir);
      return out;
    },
  };
}
