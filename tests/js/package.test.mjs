// The packed tarball installs into a fresh consumer and works from both
// entries (what a user gets from the registry, not the repository layout).
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("../..", import.meta.url).pathname;
const npm = (args, cwd) => execFileSync("npm", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

test("the packed package installs and runs in a fresh consumer", () => {
  const dir = mkdtempSync(join(tmpdir(), "acc-pack-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  npm(["pack", "--silent", "--pack-destination", dir], root);
  const tarball = readdirSync(dir).find((n) => n.endsWith(".tgz"));
  assert.ok(tarball, "npm pack produced a tarball");
  const consumer = join(dir, "consumer");
  execFileSync("mkdir", ["-p", consumer]);
  writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  npm(["install", "--no-audit", "--no-fund", "--offline", join(dir, tarball)], consumer);
  writeFileSync(
    join(consumer, "main.mjs"),
    `import { Session, ContextCompiler, HistorySelector } from "agent-context-compiler";
     import * as web from "agent-context-compiler/web";
     import { loadTokenizer } from "agent-context-compiler/tokenizers";
     import { readFileSync } from "node:fs";
     const s = new Session({ sessionId: "c" });
     s.record("user_input", "hello from a consumer");
     const ctx = await new ContextCompiler({ processors: [new HistorySelector()] }).compile(s, 100);
     web.initSync({ main: readFileSync(new URL(import.meta.resolve("agent-context-compiler/wasm"))) });
     const exact = new Session({ tokenCounter: await loadTokenizer("o200k_base") }).record("user_input", "hello world");
     const cl100k = new WebAssembly.Module(readFileSync(new URL(import.meta.resolve("agent-context-compiler/tokenizers/cl100k_base.wasm"))));
     console.log(JSON.stringify({ messages: ctx.toMessages().length, web: web.countTokens("hello world"), exact: exact.tokenEstimate, cl100k: cl100k instanceof WebAssembly.Module }));`,
  );
  const out = execFileSync(process.execPath, ["main.mjs"], { cwd: consumer, encoding: "utf8" });
  assert.deepEqual(JSON.parse(out), { messages: 2, web: 2, exact: 2, cl100k: true });
  // The inline entry: one init() from the bytes inside it, every module usable.
  writeFileSync(
    join(consumer, "inline.mjs"),
    `import * as lib from "agent-context-compiler/inline";
     await lib.init();
     const bus = new lib.EventBus();
     const registry = new lib.SchemaRegistry();
     registry.register("n", { type: "integer" });
     const store = new lib.KvArtifactStore({ get: async () => null, put: async () => {}, delete: async () => {} });
     console.log(JSON.stringify({ bus: bus.tryEmit({ type: "t", agentId: "a" }), valid: registry.validate("n", 1).valid, store: typeof store.store, tokens: lib.countTokens("hello world") }));`,
  );
  const inline = execFileSync(process.execPath, ["inline.mjs"], { cwd: consumer, encoding: "utf8" });
  assert.deepEqual(JSON.parse(inline), { bus: true, valid: true, store: "function", tokens: 2 });
  const files = JSON.parse(npm(["pack", "--dry-run", "--json"], root))[0].files.map((f) => f.path).sort();
  for (const f of [
    "pkg/entry-node.js", "pkg/entry-web.js", "pkg/entry-workerd.js", "pkg/entry-inline.js", "js/node.d.ts", "js/web.d.ts", "js/inline.d.ts", "pkg/inline/context_compiler.js", "pkg/context_compiler_bg.wasm", "pkg/types/context_compiler.d.ts", "js/host-types.d.ts",
    "pkg/context_compiler_bus.js", "pkg/context_compiler_stores.js", "pkg/context_compiler_schema.js", "js/ai-sdk.js", "js/langchain.js", "js/openai-agents.js",
    "js/tokenizers-node.js", "js/tokenizers-web.js", "js/tokenizers.d.ts", "pkg/context_compiler_o200k_base_bg.wasm", "pkg/context_compiler_cl100k_base_bg.wasm",
  ]) {
    assert.ok(files.includes(f), `${f} is packed`);
  }
  assert.ok(!files.some((f) => f.startsWith("src/") || f.startsWith("target/")), "no sources or build output beyond pkg/");
  // The entries are bundles (scripts/bundle.mjs): one chunk they share, and
  // neither the main glue nor the JS layer's modules they were bundled from.
  assert.equal(files.filter((f) => /^pkg\/core-\w+\.js$/.test(f)).length, 1, "one shared chunk");
  for (const f of ["pkg/context_compiler.js", "pkg/entry-internals.js", "js/node.js", "js/web.js", "js/api.js", "js/instance.js"]) {
    assert.ok(!files.includes(f), `${f} is not packed`);
  }
});
