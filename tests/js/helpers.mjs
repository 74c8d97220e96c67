import assert from "node:assert/strict";

/** Asserts that `fn` throws (or rejects with) a ContextCompilerError with `code`. */
export async function rejectsWithCode(fn, code, messagePart) {
  let caught;
  try {
    await fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught, `expected an error with code ${code}`);
  assert.ok(caught instanceof Error, `expected an Error, got ${typeof caught}`);
  assert.equal(caught.name, "ContextCompilerError");
  assert.equal(caught.code, code, caught.message);
  if (messagePart) assert.match(caught.message, messagePart instanceof RegExp ? messagePart : new RegExp(messagePart.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
  return caught;
}

/**
 * A processor that holds the compile until `release()` is called; `inside`
 * resolves once the compile has reached it.
 */
export function gatedProcessor() {
  let release, started;
  const gate = new Promise((r) => (release = r));
  const inside = new Promise((r) => (started = r));
  const processor = async (_session, ctx) => {
    started();
    await gate;
    return ctx;
  };
  return { processor, inside, release };
}

/** Runs `tests/js/children/<name>` with `args` in a process of its own;
 * asserts it exits with 0 and returns the JSON it printed. */
export async function childJson(name, ...args) {
  const { spawnSync } = await import("node:child_process");
  const { fileURLToPath } = await import("node:url");
  const child = spawnSync(process.execPath, [fileURLToPath(new URL(`./children/${name}`, import.meta.url)), ...args], { encoding: "utf8" });
  assert.equal(child.status, 0, child.stderr);
  return JSON.parse(child.stdout);
}
