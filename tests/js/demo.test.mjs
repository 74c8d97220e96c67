// The README's demo runs and shows what it claims.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";

test("the demo externalises the output, stays within budget and retrieves it intact", () => {
  const out = execFileSync(process.execPath, [new URL("../../examples/demo.mjs", import.meta.url).pathname], { encoding: "utf8" });
  assert.match(out, /--- AFTER externalization ---\nToken count: \d+\nWithin budget \(500\): true/);
  assert.match(out, /matches original: true/);
  assert.match(out, /Session events: user_input, tool_success, artifact_stored/);
  assert.match(out, /\[1\] user: Analyze the system logs/);
  // The zoned loop: each call reuses every message of the previous one but
  // its tail (the output the model had not read, whole there, is its handle
  // from the next call on).
  const calls = [...out.matchAll(/Call (\d): (\d+) tokens .*; (\d+) of the previous call's (\d+) messages reused/g)];
  assert.equal(calls.length, 3);
  for (const [, n, tokens, same, of] of calls) {
    assert.ok(Number(tokens) <= 4000);
    if (n !== "1") assert.ok(Number(same) >= Number(of) - 1, `call ${n}: ${same} of ${of}`);
  }
  assert.equal(calls[2][3], calls[2][4], "a call after an output small enough to stay inline reuses every message");
  assert.match(out, /first tool call read_logs\(\{"path":"\/var\/log\/worker.log"\}\) answered by: \[artifact [0-9a-f]{64} /);
});
