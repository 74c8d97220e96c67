// Every exported function, constructor and method, read from the package's
// own declarations (js/node.d.ts, with the TypeScript compiler), called with
// a value of the wrong type in each parameter in turn (the others given
// plausible values): each call either throws or rejects with a coded error,
// or takes the value (null or undefined for an optional parameter), and every
// WebAssembly instance lives on. A wasm-bindgen `&str` parameter given a
// number once read memory out of bounds and closed the module.
import { test } from "node:test";
import assert from "node:assert/strict";
import ts from "typescript";
import * as lib from "agent-context-compiler";
import { mapKv } from "../conformance/kv_adapters.mjs";
import { program, callables, factories, plausible } from "./declared_api.mjs";

/** Values of every kind, and a TypeScript type standing for each. */
const CANDIDATES = `
declare const aNumber: number;
declare const aString: string;
declare const anObject: { wrong: true };
declare const anArray: number[];
declare const aBoolean: boolean;
declare const aNull: null;
declare const anUndefined: undefined;
`;
const VALUES = {
  aNumber: 42,
  aString: "wrong",
  anObject: { wrong: true },
  anArray: [1, 2],
  aBoolean: true,
  aNull: null,
  anUndefined: undefined,
};

/** Whether `type` (without null and undefined) is an object type whose keys are all optional. */
function isWeak(checker, type) {
  const parts = (type.isUnion() ? type.types : [type]).filter((t) => !(t.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined)));
  return parts.some((t) => {
    if (!(t.flags & ts.TypeFlags.Object) || t.getCallSignatures().length > 0) return false;
    const props = checker.getPropertiesOfType(t);
    return props.length > 0 && props.every((p) => p.flags & ts.SymbolFlags.Optional);
  });
}

/** Resolves to `promise`'s outcome, or "pending" after `ms`. */
function settle(promise, ms) {
  return Promise.race([
    promise.then((value) => ({ value }), (error) => ({ error })),
    new Promise((r) => setTimeout(() => r({ pending: true }), ms)),
  ]);
}

const BROKEN = new Set(["MODULE_POISONED", "INTERNAL_PANIC", "OUT_OF_MEMORY"]);

/** Throws when any of the package's instances no longer answers. */
async function alive() {
  const s = new lib.Session();
  assert.equal(s.record("user_input", "still here").kind, "user_input");
  s.free();
  new lib.EventBus().free();
  const store = new lib.KvArtifactStore(mapKv());
  await store.store("x", "t");
  store.free();
}

test("every exported function, constructor and method gives a coded error for a wrong type, and the modules live", async (t) => {
  const world = program(CANDIDATES);
  const all = callables(world);
  const owners = new Set(all.map((c) => c.owner).filter(Boolean));
  for (const owner of owners) assert.ok(owner in factories, `a factory for ${owner}`);
  assert.ok(all.length > 150, `${all.length} callables read from the declarations`);
  // A value is wrong for a parameter when no overload of the callable
  // takes it there.
  const overloads = new Map();
  for (const c of all) {
    const key = `${c.kind} ${c.owner}.${c.name}`;
    overloads.set(key, [...(overloads.get(key) ?? []), c]);
  }
  const takenByAnOverload = (c, i, candidate) =>
    overloads.get(`${c.kind} ${c.owner}.${c.name}`).some((o) => {
      const p = o.params[i];
      if (p === undefined) return false;
      if (world.checker.isTypeAssignableTo(world.types[candidate], p.type)) return true;
      // undefined where null is taken, or for an optional parameter, is nothing too.
      return candidate === "anUndefined" && (p.optional || world.checker.isTypeAssignableTo(world.types.aNull, p.type));
    });
  let calls = 0;
  const failures = [];
  const seen = new Set();
  for (const c of all) {
    if (c.owner !== null && factories[c.owner] === null) continue;
    // Loaders take a module or bytes of any shape: they are tested in entries.test.mjs.
    if (c.kind === "function" && /^init/.test(c.name)) continue;
    for (let i = 0; i < c.params.length; i++) {
      for (const [candidate, value] of Object.entries(VALUES)) {
        if (takenByAnOverload(c, i, candidate)) continue;
        const once = `${c.kind} ${c.owner}.${c.name} ${i} ${candidate}`;
        if (seen.has(once)) continue;
        seen.add(once);
        const args = c.params.map((p, j) => (j === i ? value : plausible(world.checker, p)));
        const label = `${c.owner ? `${c.owner}.` : ""}${c.name}(${c.params.map((p, j) => (j === i ? `${p.name}: ${candidate}` : p.name)).join(", ")})`;
        let outcome;
        try {
          let result;
          if (c.kind === "constructor") result = new lib[c.owner](...args);
          else if (c.kind === "static") result = lib[c.owner][c.name](...args);
          else if (c.kind === "function") result = lib[c.name](...args);
          else {
            const instance = await factories[c.owner]();
            result = instance[c.name](...args);
          }
          outcome = result instanceof Promise ? await settle(result, 2000) : { value: result };
        } catch (error) {
          outcome = { error };
        }
        calls++;
        // Taken without an error, rightly: nothing for an optional
        // parameter, and an object with unknown keys where an options
        // object of optional keys belongs (TypeScript's weak type check).
        const optionalNothing = c.params[i].optional && (value === null || value === undefined);
        const weakObject =
          candidate === "anObject" &&
          overloads.get(`${c.kind} ${c.owner}.${c.name}`).some((o) => o.params[i] && isWeak(world.checker, o.params[i].type));
        if (outcome.pending) failures.push(`${label}: never settled`);
        else if (outcome.error !== undefined) {
          const code = outcome.error?.code;
          if (typeof code !== "string") failures.push(`${label}: threw without a code: ${outcome.error}`);
          else if (BROKEN.has(code)) failures.push(`${label}: ${code}: ${outcome.error.message}`);
        } else if (outcome.value?.isError === true && /^[A-Z_]+: /.test(outcome.value.content?.[0]?.text)) {
          // An MCP tool result reports its error in the result, coded.
        } else if (!optionalNothing && !weakObject) {
          failures.push(`${label}: took ${candidate} without an error`);
        }
        try {
          await alive();
        } catch (e) {
          failures.push(`${label}: the package no longer answers: ${e.message}`);
          break;
        }
      }
    }
  }
  t.diagnostic(`${calls} calls over ${all.length} callables`);
  assert.deepEqual(failures, []);
});
