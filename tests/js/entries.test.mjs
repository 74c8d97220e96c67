// The package's entries: the node entry is ready on import; the web entry
// throws NOT_INITIALIZED until init, then behaves the same.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import * as nodeEntry from "agent-context-compiler";
import * as glue from "../../pkg/context_compiler.js";
import { EXPORTED_NAMES } from "./exported-names.mjs";

test("both entries export exactly the glue's public names", async () => {
  // `__installHost` and `__runTasks` are the entries' own hooks (js/instance.js).
  const glueNames = Object.keys(glue)
    .filter((n) => n !== "default" && n !== "initSync" && !n.startsWith("__"))
    .sort();
  assert.deepEqual(glueNames, [...EXPORTED_NAMES].sort());
  const web = await import("agent-context-compiler/web");
  for (const n of EXPORTED_NAMES) {
    assert.equal(typeof nodeEntry[n], "function", n);
    assert.equal(typeof web[n], "function", n);
  }
});

test("the web entry throws NOT_INITIALIZED before init, then works", () => {
  // In a fresh process: here the node entry has already loaded the instance.
  const script = fileURLToPath(new URL("./children/web_entry_first.mjs", import.meta.url));
  const r = spawnSync(process.execPath, [script], { encoding: "utf8", timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split("\n").pop());
  for (const e of out.before) {
    assert.ok(e !== null, "a use before init must throw");
    assert.equal(e.code, "NOT_INITIALIZED");
    assert.equal(e.name, "ContextCompilerError");
    assert.match(e.message, /init\(\)/);
  }
  assert.deepEqual(
    { instance: out.instance, sessionId: out.sessionId, tokens: out.tokens, compiled: out.compiled },
    { instance: true, sessionId: "w", tokens: 2, compiled: true },
  );
});

test("both entries share one instance: the web entry is ready once the node entry loaded it", async () => {
  const web = await import("agent-context-compiler/web");
  const s = new web.Session({ sessionId: "shared" });
  assert.ok(s instanceof nodeEntry.Session);
  assert.equal(web.countTokens("hello world"), nodeEntry.countTokens("hello world"));
});
