// Issue 65, item 3, a cold start of one file: importing the node entry and a
// first compile load the entry's bundle and the one chunk the entries share
// (scripts/bundle.mjs), the main `.wasm`, and nothing else — no glue of the
// optional modules, none of the JS layer's source modules, no Node builtin
// that loads Node's streams.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = fileURLToPath(new URL("../../pkg/", import.meta.url));

test("an import of the node entry and a first compile load one bundle and its chunk, and the main .wasm", () => {
  const script = fileURLToPath(new URL("./children/cold_start.mjs", import.meta.url));
  const r = spawnSync(process.execPath, [script], { encoding: "utf8", timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split("\n").pop());
  assert.equal(out.messages, 4);
  const ours = out.modules.filter((p) => !p.includes("/tests/js/children/"));
  assert.equal(ours.length, 2, `two modules: ${ours.join(", ")}`);
  assert.equal(ours[0], `${pkg}entry-node.js`);
  assert.match(ours[1], /\/pkg\/core-\w+\.js$/);
  assert.deepEqual(out.wasm, ["context_compiler_bg.wasm"]);
  // Builtins loaded for the first time: no streams, files, crypto or workers.
  const heavy = out.builtins.filter((m) => /stream|fs\/promises|crypto|worker|url|http/.test(m));
  assert.deepEqual(heavy, []);
});

test("the entries' bundles import one chunk, which imports nothing; the optional modules' glue is imported dynamically", () => {
  const text = (f) => readFileSync(`${pkg}${f}`, "utf8");
  /** The specifiers of the static `import ... from "x"` and `export ... from "x"` in `code`. */
  const staticImports = (code) => [...code.matchAll(/(?:^|[;}\s])(?:import|export)\s*(?:[\w$*\s{},]*?from\s*)?["']([^"']+)["']/g)].map((m) => m[1]);
  const chunkOf = (entry) => {
    const imports = staticImports(text(`entry-${entry}.js`)).filter((s) => !s.startsWith("node:"));
    return imports;
  };
  const node = chunkOf("node");
  assert.equal(node.length, 1, `entry-node.js imports ${node}`);
  assert.match(node[0], /^\.\/core-\w+\.js$/);
  for (const entry of ["web", "inline"]) {
    const imports = chunkOf(entry).filter((s) => !s.startsWith("../pkg/inline/"));
    assert.deepEqual(imports, node, `entry-${entry}.js shares the node entry's chunk`);
  }
  const chunk = text(basename(node[0]));
  assert.deepEqual(staticImports(chunk), [], "the chunk imports nothing statically");
  for (const glue of ["context_compiler_bus", "context_compiler_stores", "context_compiler_schema"]) {
    assert.ok(chunk.includes(`import("../pkg/${glue}.js")`), `${glue} is imported on first use`);
  }
  // The workerd entry holds the optional glue for initSync (its bundle is the worker's anyway).
  assert.deepEqual(chunkOf("workerd"), node);
});

test("the optional modules' classes before their glue loads: subclasses, instanceof and statics work once it has", () => {
  // In a fresh process, through the web entry: nothing loaded until init.
  const child = `
    import { readFileSync } from "node:fs";
    import * as web from "agent-context-compiler/web";
    class MyBus extends web.EventBus {
      twice(e) { return [this.tryEmit(e), this.tryEmit(e)]; }
    }
    let before;
    try { new MyBus(); } catch (e) { before = e.code; }
    let staticBefore;
    try { await web.IndexedDbArtifactStore.open({ databaseName: "x" }); } catch (e) { staticBefore = e.code; }
    let typo;
    try { new web.EventBus({ maxQeue: 1 }); } catch (e) { typo = e.code; }
    const wasm = (name) => readFileSync(new URL(import.meta.resolve("agent-context-compiler/" + name)));
    await web.init({ modules: ["bus", "stores"], wasm: { main: wasm("context_compiler.wasm"), bus: wasm("bus.wasm"), stores: wasm("stores.wasm") } });
    const bus = new MyBus({ maxQueue: 4 });
    const plain = new web.EventBus();
    console.log(JSON.stringify({
      before, staticBefore, typo,
      emitted: bus.twice({ type: "t", agentId: "a" }),
      instances: [bus instanceof web.EventBus, bus instanceof MyBus, plain instanceof web.EventBus, plain instanceof MyBus, {} instanceof web.EventBus],
      names: [web.EventBus.name, MyBus.name, plain.constructor.name, typeof web.IndexedDbArtifactStore.open],
    }));`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", child], { cwd: fileURLToPath(new URL("../..", import.meta.url)), encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), {
    before: "NOT_INITIALIZED",
    staticBefore: "NOT_INITIALIZED",
    typo: "INVALID_ARGUMENT",
    emitted: [true, true],
    instances: [true, true, true, false, false],
    names: ["EventBus", "MyBus", "EventBus", "function"],
  });
});

test("the node entry loads an optional module when one of its classes is used, not when it is tested with instanceof", () => {
  const child = `
    import { noteWasmReads } from ${JSON.stringify(new URL("./children/wasm_reads.mjs", import.meta.url).href)};
    const read = noteWasmReads();
    const lib = await import("agent-context-compiler");
    const before = [{} instanceof lib.EventBus, [...read]];
    class MyBus extends lib.EventBus {}
    const bus = new MyBus();
    console.log(JSON.stringify({ before, after: [bus instanceof lib.EventBus, bus instanceof MyBus, [...read]] }));`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", child], { cwd: fileURLToPath(new URL("../..", import.meta.url)), encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), {
    before: [false, ["context_compiler_bg.wasm"]],
    after: [true, true, ["context_compiler_bg.wasm", "context_compiler_bus_bg.wasm"]],
  });
});
