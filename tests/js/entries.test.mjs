// The package's entries: the node entry is ready on import; the web entry
// throws NOT_INITIALIZED until init, then behaves the same.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as nodeEntry from "agent-context-compiler";
import * as glue from "../../pkg/context_compiler.js";
import { EXPORTED_NAMES } from "./exported-names.mjs";

test("both entries export exactly the glue's public names", async () => {
  const glueNames = Object.keys(glue).filter((n) => n !== "default" && n !== "initSync").sort();
  assert.deepEqual(glueNames, [...EXPORTED_NAMES].sort());
  const web = await import("agent-context-compiler/web");
  for (const n of EXPORTED_NAMES) {
    assert.equal(typeof nodeEntry[n], "function", n);
    assert.equal(typeof web[n], "function", n);
  }
});

test("the web entry throws NOT_INITIALIZED before init, then works", async () => {
  const web = await import("agent-context-compiler/web");
  for (const use of [() => new web.Session(), () => web.countTokens("x"), () => web.Session.importJson("{}")]) {
    assert.throws(use, (e) => e.code === "NOT_INITIALIZED" && e.name === "ContextCompilerError" && /init\(\)/.test(e.message));
  }
  web.initSync(readFileSync(new URL("../../pkg/context_compiler_bg.wasm", import.meta.url)));
  const s = new web.Session({ sessionId: "w" });
  assert.ok(s instanceof web.Session);
  assert.equal(s.sessionId, "w");
  assert.equal(web.countTokens("hello world"), 2);
});
