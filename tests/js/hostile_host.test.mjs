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

test("running out of wasm memory closes the instance clearly, in a sync call and inside an async task", () => {
  // Before: the call threw a bare `RuntimeError: unreachable`, the session
  // stayed borrowed (SESSION_BUSY forever, `free()` threw), and a trap inside
  // an async task ended the process as an uncaught exception.
  for (const mode of ["sync", "async"]) {
    const run = child("out_of_memory.mjs", ["--expose-gc", "--wasm-max-mem-pages=2048"], [mode]);
    assert.equal(run.status, 0, `${mode}: ${run.stderr}`);
    const { failure, after, pending } = JSON.parse(run.stdout.trim().split("\n").pop());
    assert.equal(failure.ok, false, mode);
    assert.equal(failure.name, "ContextCompilerError");
    if (mode === "sync") {
      // The call that ran out says so, with the size it asked for.
      assert.equal(failure.code, "OUT_OF_MEMORY");
      assert.match(failure.message, /allocation of \d+ bytes failed/);
    } else {
      // The task's promise, like every pending one, is rejected.
      assert.equal(failure.code, "MODULE_POISONED");
      assert.match(failure.message, /after OUT_OF_MEMORY/);
    }
    for (const [use, r] of Object.entries(after)) {
      if (use === "free") {
        assert.deepEqual(r, { ok: true, value: null }, `${mode}: free() does nothing`);
        continue;
      }
      assert.equal(r.ok, false, `${mode}: ${use} must fail`);
      assert.equal(r.code, "MODULE_POISONED", `${mode}: ${use}: ${r.message}`);
      assert.match(r.message, /OUT_OF_MEMORY.*new worker or process/);
    }
    // A compile that was waiting on a processor does not hang.
    assert.equal(pending.code, "MODULE_POISONED", mode);
  }
});

test("running the event-bus module out of memory closes that module only: the main module goes on", () => {
  const run = child("bus_out_of_memory.mjs", ["--wasm-max-mem-pages=2048"]);
  assert.equal(run.status, 0, run.stderr);
  const { failure, after, pendingEmit } = JSON.parse(run.stdout.trim().split("\n").pop());
  assert.equal(failure?.code, "OUT_OF_MEMORY", JSON.stringify(failure));
  assert.match(failure.message, /allocation of \d+ bytes failed.*the event-bus module is now closed/);
  for (const use of ["busEmit", "busGetter", "newBus", "newMonitor"]) {
    assert.equal(after[use].ok, false, `${use} must fail`);
    assert.equal(after[use].code, "MODULE_POISONED", `${use}: ${after[use].message}`);
    assert.match(after[use].message, /the event-bus module stopped after OUT_OF_MEMORY.*sessions, compilers and stores go on/);
  }
  assert.deepEqual(after.busFree, { ok: true, value: null }, "free() does nothing");
  assert.deepEqual(after.record, { ok: true, value: "true" });
  assert.deepEqual(after.count, { ok: true, value: "2" });
  assert.deepEqual(after.newSession, { ok: true, value: "new" });
  // A promise of the bus module still pending is rejected, not left hanging.
  assert.equal(pendingEmit.ok, false);
  assert.equal(pendingEmit.code, "MODULE_POISONED");
});

test("recording a long session grows wasm memory geometrically, a few dozen times", () => {
  // Before: the allocator grew the memory by what each allocation needed,
  // V8 collected garbage at each growth, and the last tenth of 10^5 events
  // recorded ten times slower than the first.
  const run = child("record_memory.mjs");
  assert.equal(run.status, 0, run.stderr);
  const { start, end, growths } = JSON.parse(run.stdout.trim().split("\n").pop());
  assert.ok(end > 20 * start, `${start} -> ${end}`);
  assert.ok(growths <= 40, `${growths} growths from ${start} to ${end} bytes`);
});

test("a cold importJson grows wasm memory once, to what the document needs, and a warm one not at all", () => {
  // Before: memory grew page by page during the import (a cold import of
  // 100,000 events took 8-31 s against 0.5 s warm). The import reserves
  // what it needs up front, and only what the memory lacks.
  const run = child("import_memory.mjs");
  assert.equal(run.status, 0, run.stderr);
  const { documentBytes, start, sizes } = JSON.parse(run.stdout.trim().split("\n").pop());
  const reserved = 10 * documentBytes;
  // One growth to the reservation (the document is copied into it), none
  // while the import ran: at most the allocator's rounding above it, and the
  // eighth it grows ahead (crates/js/src/alloc.rs).
  assert.ok(sizes[0] >= reserved, `${sizes[0]} < ${reserved}`);
  assert.ok(sizes[0] <= ((start + reserved) * 9) / 8 + 2 * 1048576, `grew to ${sizes[0]} from ${start} for a ${documentBytes}-byte document`);
  // Later imports reuse the freed memory.
  assert.deepEqual(sizes.slice(1), [sizes[0], sizes[0], sizes[0], sizes[0]]);
});
