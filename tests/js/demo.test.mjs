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
});
