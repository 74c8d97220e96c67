// A misspelt option is an error (INVALID_ARGUMENT naming the key and the
// closest one the call takes), not a default silently kept: in every
// function, constructor and method that takes options (js/option-keys.js,
// generated from the declarations; options_drift.test.mjs keeps it current).
import { test } from "node:test";
import assert from "node:assert/strict";
import * as lib from "agent-context-compiler";
import { OPTION_KEYS } from "../../js/option-keys.js";
import { rejectsWithCode } from "./helpers.mjs";

const { ContextCompiler, HistorySelector, MemoryArtifactStore, Session, runCompiled } = lib;

test("the typos a user makes are refused, with the key meant", async () => {
  assert.throws(() => new HistorySelector({ keeplast: 3 }), (e) => e.code === "INVALID_ARGUMENT" && /unknown option keeplast; did you mean keepLast\?/.test(e.message));
  assert.throws(() => new Session({ sessionID: "s-1" }), /unknown option sessionID; did you mean sessionId\?/);
  const session = new Session();
  session.record("user_input", "hi");
  const compiler = new ContextCompiler({ processors: [new HistorySelector()] });
  const e = await rejectsWithCode(() => compiler.compile(session, 1000, { system_prompt: "You are terse." }), "INVALID_ARGUMENT");
  assert.match(e.message, /ContextCompiler\.compile: unknown option system_prompt; did you mean systemPrompt\?/);
  const run = await rejectsWithCode(() => runCompiled("hi", { model: async () => ({ content: "ok" }), budjet: 1000 }), "INVALID_ARGUMENT");
  assert.match(run.message, /did you mean budget\?/);
  // Far from every key: no guess, the keys it takes.
  assert.throws(() => new HistorySelector({ colour: "red" }), (err) => !/did you mean/.test(err.message) && /it takes keepFirst, keepLast/.test(err.message));
  // What the options are given as stays open: undefined values of known
  // keys, objects made by a class, and the right keys pass.
  new HistorySelector({ keepFirst: 1, keepLast: undefined }).free();
  await new MemoryArtifactStore().store("x", "tool:t", { mimeType: "text/plain" });
  (await compiler.compile(session, 1000, { systemPrompt: "You are terse." })).free();
  session.free();
});

test("every options parameter refuses a key it does not declare", async () => {
  let checked = 0;
  for (const [label, entries] of Object.entries(OPTION_KEYS)) {
    if (label === "init") continue; // the web entry's loader, not guarded in Node
    const [owner, member] = label.split(".");
    const target = lib[owner];
    if (target === undefined) continue; // IndexedDbArtifactStore and Session.sync's JS definitions are checked elsewhere
    for (const [index, , async] of entries) {
      const args = [];
      args[index] = { notAnOption: 1 };
      let call;
      if (member === undefined) call = () => (typeof target === "function" && /^[A-Z]/.test(owner) ? new target(...args) : target(...args));
      else if (Object.hasOwn(target.prototype ?? {}, member)) call = () => target.prototype[member].call({}, ...args);
      else if (Object.hasOwn(target, member)) call = () => target[member](...args);
      else assert.fail(`${label} is not in the package`);
      // Defined in JS, with its own check of its options (session-saving.js).
      if (label === "Session.sync") continue;
      let error;
      try {
        const result = call();
        assert.ok(async, `${label} returned where it should have refused`);
        await result;
      } catch (e) {
        error = e;
      }
      assert.equal(error?.code, "INVALID_ARGUMENT", `${label}: ${error?.message}`);
      assert.match(error.message, /unknown option notAnOption/, label);
      checked++;
    }
  }
  assert.ok(checked >= 50, `${checked} options parameters checked`);
});
