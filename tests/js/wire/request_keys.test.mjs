// request_keys.mjs is what gen_request_keys.mjs reads from the installed SDKs'
// .d.ts files today (it runs the TypeScript checker: a few seconds).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { generate } from "./gen_request_keys.mjs";

test("request_keys.mjs matches the installed SDKs' request types (else run node tests/js/wire/gen_request_keys.mjs)", () => {
  const current = readFileSync(new URL("./request_keys.mjs", import.meta.url), "utf8");
  assert.ok(generate() === current, "tests/js/wire/request_keys.mjs is stale: run node tests/js/wire/gen_request_keys.mjs");
});
