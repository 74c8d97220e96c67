// FsArtifactStore in Node over real temporary directories: the store
// conformance suite (one file per artifact, and chunk files), seed 000's
// test_fs_store_retrieve_dedup, the layout on disk, a crash's leftover
// temporary file, a write failing part-way through a save, a store reopened
// over the same directory, bad options and file systems, and
// STORE_UNAVAILABLE where the entry has no file system.
import { after, test } from "node:test";
import { execFileSync } from "node:child_process";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as lib from "agent-context-compiler";
import { nodeFiles } from "../../js/files.js";
import { BEHAVIOURS, runStoreSuite } from "../conformance/store_suite.mjs";

const root = mkdtempSync(join(tmpdir(), "acc-fs-js-"));
after(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => join(root, String(dirs++));
const { FsArtifactStore, Session } = lib;

/** Every file under `dir`, relative, sorted. */
function filesUnder(dir, relative = "") {
  const out = [];
  for (const e of readdirSync(join(dir, relative), { withFileTypes: true })) {
    const child = relative === "" ? e.name : `${relative}/${e.name}`;
    if (e.isDirectory()) out.push(...filesUnder(dir, child));
    else out.push(child);
  }
  return out.sort();
}

function fsBackend(options = {}) {
  const dirOf = new WeakMap();
  return {
    async make() {
      const baseDir = freshDir();
      const store = new FsArtifactStore({ baseDir, ...options });
      dirOf.set(store, baseDir);
      return store;
    },
    async corrupt(store, id) {
      const dir = join(dirOf.get(store), "a", id.slice(0, 2));
      const file = readdirSync(dir).filter((n) => n.startsWith(id)).sort().at(-1);
      const bytes = readFileSync(join(dir, file));
      bytes[bytes.length - 1] ^= 1;
      writeFileSync(join(dir, file), bytes);
    },
    largeSize: options.chunkBytes ? options.chunkBytes * 40 + 123 : 3 << 20,
  };
}

for (const [name, backend] of Object.entries({ "one file per artifact": fsBackend(), "4 KiB chunk files": fsBackend({ chunkBytes: 4096 }) })) {
  test(`store conformance: FsArtifactStore, ${name}`, async (t) => {
    const results = await runStoreSuite(lib, backend);
    assert.equal(results.length, BEHAVIOURS.length);
    for (const r of results) await t.test(r.name, () => assert.ok(r.ok, r.error));
  });
}

test("seed: test_fs_store_retrieve_dedup", async () => {
  const store = new FsArtifactStore({ baseDir: freshDir() });
  const content = new TextEncoder().encode("Another large payload for filesystem storage.");
  const h1 = await store.store(content, "tool:file_read", { mimeType: "text/plain" });
  assert.equal(h1.sizeBytes, content.length);
  const h2 = await store.store(content, "tool:file_read", { mimeType: "text/plain" });
  assert.equal(h2.artifactId, h1.artifactId);
  assert.deepEqual(await store.retrieve(h1.artifactId), content);
  assert.equal(await store.exists(h1.artifactId), true);
  assert.equal(await store.exists("nonexistent"), false);
});

test("content passes through as the caller's buffer and comes back as a plain Uint8Array", async () => {
  // Node's readFile answers with Buffers; retrieve() still gives a plain,
  // unshared Uint8Array, inline (one file) and chunked (chunk files) alike.
  for (const chunkBytes of [undefined, 4096]) {
    const store = new FsArtifactStore({ baseDir: freshDir(), chunkBytes });
    const text = `${"z".repeat(20_000)} ${chunkBytes}`;
    const content = Buffer.from(text);
    const pending = store.store(content, "tool:file_read");
    content.fill(0); // the caller reuses its buffer at once
    const handle = await pending;
    assert.equal(handle.artifactId, lib.contentId(text));
    const back = await store.retrieve(handle.artifactId);
    assert.equal(back.constructor, Uint8Array);
    assert.equal(new TextDecoder().decode(back), text);
    // Each read is a file read of its own: changing one changes no other.
    back.fill(1);
    assert.equal(new TextDecoder().decode(await store.retrieve(handle.artifactId)), text);
    // A DataView of the same bytes is the same artifact.
    const bytes = new TextEncoder().encode(text);
    const view = new DataView(bytes.buffer, 0, bytes.length);
    assert.equal((await store.store(view, "tool:file_read")).artifactId, handle.artifactId);
  }
});

test("artifacts fan out by id prefix; sessions are a head and segment files; nothing temporary is left", async () => {
  const baseDir = freshDir();
  const store = new FsArtifactStore({ baseDir });
  const h = await store.store("fan out", "tool:x");
  const s = new Session({ sessionId: "Chat 1" });
  s.record("user_input", "hello");
  await store.saveSession(s);
  const files = filesUnder(baseDir);
  assert.ok(files.includes(`a/${h.artifactId.slice(0, 2)}/${h.artifactId}.rec`), files.join(" "));
  assert.ok(files.includes("s/%43hat%201.v/1"), `the head's first version: ${files.join(" ")}`);
  assert.ok(files.some((f) => f.startsWith("s/%43hat%201/")), files.join(" "));
  assert.ok(!files.some((f) => f.includes(".tmp-")), files.join(" "));
});

test("a store reopened over the directory has the artifacts and sessions, and saves append", async () => {
  const baseDir = freshDir();
  const s = new Session({ sessionId: "s" });
  for (let i = 0; i < 4; i++) s.record("user_input", `question ${i}`);
  const first = new FsArtifactStore({ baseDir });
  const h = await first.store("kept", "tool:x", { sessionId: "s" });
  await first.saveSession(s);
  const second = new FsArtifactStore({ baseDir });
  assert.equal(new TextDecoder().decode(await second.retrieve(h.artifactId)), "kept");
  assert.deepEqual(await second.listSessions(), ["s"]);
  assert.deepEqual((await second.listHandles("s")).map((x) => x.artifactId), [h.artifactId]);
  assert.equal((await second.loadSession("s")).exportJson(), s.exportJson());
  s.record("user_input", "one more");
  assert.deepEqual(await second.saveSession(s), { eventsWritten: 1, rewritten: false });
  assert.equal((await new FsArtifactStore({ baseDir }).loadSession("s")).eventLog.length, 5);
});

test("a temporary file left by a crash is ignored", async () => {
  const baseDir = freshDir();
  const store = new FsArtifactStore({ baseDir });
  const h = await store.store("whole", "tool:x");
  writeFileSync(join(baseDir, "a", h.artifactId.slice(0, 2), `${h.artifactId}.rec.tmp-1-0-abc`), "half a rec");
  assert.equal(new TextDecoder().decode(await store.retrieve(h.artifactId)), "whole");
  assert.deepEqual((await store.listHandles()).map((x) => x.artifactId), [h.artifactId]);
});

test("a save whose writes fail part-way leaves the previous session loadable", async () => {
  const baseDir = freshDir();
  const s = new Session({ sessionId: "s" });
  for (let i = 0; i < 3; i++) s.record("user_input", `question ${i}`);
  await new FsArtifactStore({ baseDir }).saveSession(s);
  for (let i = 0; i < 40; i++) s.record("user_input", `later ${i} ${"x".repeat(3000)}`);
  for (let allowed = 0; allowed < 3; allowed++) {
    const real = nodeFiles(baseDir);
    let left = allowed;
    const files = { ...real, write: async (path, bytes) => (left-- > 0 ? real.write(path, bytes) : Promise.reject(new Error("ENOSPC: no space left"))) };
    const failing = new FsArtifactStore({ baseDir, files, chunkBytes: 16384 });
    await assert.rejects(failing.saveSession(s), (e) => e.code === "STORE_FAILED" && /ENOSPC/.test(e.message));
    const loaded = await new FsArtifactStore({ baseDir }).loadSession("s");
    assert.ok([3, 43].includes(loaded.eventLog.length), `${loaded.eventLog.length} events`);
  }
  await new FsArtifactStore({ baseDir }).saveSession(s);
  assert.equal((await new FsArtifactStore({ baseDir }).loadSession("s")).exportJson(), s.exportJson());
});

test("bad options and file systems are clear errors", async () => {
  assert.throws(() => new FsArtifactStore({}), (e) => e.code === "INVALID_ARGUMENT" && /baseDir/.test(e.message));
  assert.throws(() => new FsArtifactStore({ baseDir: "" }), (e) => e.code === "INVALID_ARGUMENT");
  assert.throws(() => new FsArtifactStore(null), (e) => e.code === "INVALID_ARGUMENT");
  assert.throws(() => new FsArtifactStore({ baseDir: "d", files: { read() {} } }), (e) => e.code === "INVALID_ARGUMENT" && /no write/.test(e.message));
  assert.throws(() => new FsArtifactStore({ baseDir: freshDir(), chunkBytes: 10 }), (e) => e.code === "INVALID_ARGUMENT");
  const odd = { ...nodeFiles(freshDir()), list: async () => "not an array" };
  await assert.rejects(new FsArtifactStore({ baseDir: "d", files: odd }).listHandles(), (e) => e.code === "STORE_INVALID_VALUE");
  const hostile = { ...nodeFiles(freshDir()), read: async () => 42 };
  await assert.rejects(new FsArtifactStore({ baseDir: "d", files: hostile }).retrieve("ab".repeat(32)), (e) => e.code === "STORE_INVALID_VALUE");
});

test("the web entry has no file system: STORE_UNAVAILABLE unless files are given", () => {
  // In a process of its own: the entries share one instance, and the Node
  // entry installs node:fs/promises.
  const child = `
    import { readFileSync } from "node:fs";
    import * as web from "agent-context-compiler/web";
    import { nodeFiles } from ${JSON.stringify(new URL("../../js/files.js", import.meta.url).href)};
    web.initSync({
      main: readFileSync(new URL(import.meta.resolve("agent-context-compiler/context_compiler.wasm"))),
      stores: readFileSync(new URL(import.meta.resolve("agent-context-compiler/stores.wasm"))),
    });
    let code;
    try { new web.FsArtifactStore({ baseDir: "d" }); } catch (e) { code = e.code + " " + /options[.]files/.test(e.message); }
    const given = new web.FsArtifactStore({ baseDir: "d", files: nodeFiles(${JSON.stringify(freshDir())}) });
    console.log(JSON.stringify({ code, given: given instanceof web.FsArtifactStore }));`;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", child], { cwd: new URL("../..", import.meta.url), encoding: "utf8" });
  assert.deepEqual(JSON.parse(out), { code: "STORE_UNAVAILABLE true", given: true });
});

test("an FsArtifactStore externalises a compile's large tool output", async () => {
  const store = new FsArtifactStore({ baseDir: freshDir() });
  const s = new Session({ sessionId: "c" });
  s.record("tool_success", { tool_name: "read_logs", output: "log line\n".repeat(500) });
  const ctx = await new lib.ContextCompiler({ processors: [new lib.HistorySelector(), new lib.ArtifactAttacher(store, { thresholdBytes: 1024 })] }).compile(s, 1000);
  assert.equal(ctx.artifactRefs.length, 1);
  assert.equal(new TextDecoder().decode(await store.retrieve(ctx.artifactRefs[0].handle)), "log line\n".repeat(500));
});
