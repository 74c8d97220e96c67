// Host values that throw when read (Proxy traps, getters) and what crashes
// or leaks must not take the process down: each runs in a child process.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const child = (name, nodeArgs = [], scriptArgs = []) => {
  const script = fileURLToPath(new URL(`./children/${name}`, import.meta.url));
  return spawnSync(process.execPath, [...nodeArgs, script, ...scriptArgs], { encoding: "utf8", timeout: 300_000 });
};

test("values a bridge hands in are read defensively: each call is a tool_error event", () => {
  const r = child("hostile_bridge.mjs");
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split("\n").pop());
  for (const name of ["ownKeys", "getTrap", "revoked", "messageGetter", "messageGetterSync", "thenGetter"]) {
    assert.equal(out[name].kind, "tool_error", `${name}: ${JSON.stringify(out[name])}`);
    assert.equal(typeof out[name].error, "string");
  }
  assert.match(out.ownKeys.error, /key listing threw/);
  assert.match(out.messageGetter.error, /message could not be read/);
  assert.equal(out.events, 12);
});

test("tool calls with every object freed leave no heap behind", () => {
  // Before: ~765 bytes a call (the deadline's promise never settled, so its
  // callbacks and all they held stayed alive). A bound well under that.
  for (const [calls, mode] of [[20000, "settling"], [3000, "hanging"]]) {
    const run = child("handler_leak.mjs", ["--expose-gc"], [String(calls), mode]);
    assert.equal(run.status, 0, run.stderr);
    const { bytesPerCall } = JSON.parse(run.stdout.trim().split("\n").pop());
    assert.ok(bytesPerCall < 200, `${mode}: ${bytesPerCall} bytes per call`);
  }
});
