// The options objects the package declares (js/node.d.ts) against the
// options its Rust readers actually read. Each exported function,
// constructor and method that takes an options object is called with a
// `Proxy` that records every key read (required keys answer a plausible
// value, optional ones nothing). A key read but not declared, or declared
// but never read, is a drift between the TypeScript and the Rust side: the
// data the package hands out is checked the other way round, by
// type_drift.test.mjs.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import ts from "typescript";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as lib from "agent-context-compiler";
import { mapKv } from "../conformance/kv_adapters.mjs";
import { program, callables, factories, optionKeysModule, optionsType, plausible } from "./declared_api.mjs";
import { pgSchema } from "./servers.mjs";

const bus = () => new lib.EventBus();
const llm = async () => "[]";
/**
 * Where a plausible value is not enough for the call to get as far as
 * reading its options: the other arguments, and the required keys.
 */
const VALID = {
  "runCompiled(options)": { args: () => ["hi"], base: () => ({ model: async () => ({ content: "ok" }), budget: 1000 }) },
  "orchestrateCompiled(options)": { args: () => [{ task: "t", budget: 1000 }], base: () => ({ model: async () => ({ content: "ok" }) }) },
  "Session.record(options)": { args: () => ["user_input", "hi"] },
  "attachMedia(options)": { args: () => [new lib.MemoryArtifactStore(), new Uint8Array(readFileSync(new URL("../fixtures/media/icon.png", import.meta.url)))] },
  "Session.recordUsage(options)": { args: () => [{ inputTokens: 10 }] },
  "EventLog.append(options)": { args: () => ["user_input", "hi"] },
  "Session.importJson(options)": { args: () => [new lib.Session().exportJson()] },
  "Session.attachBus(options)": { args: () => [bus()] },
  "ArtifactAttacher.constructor(options)": { args: () => [new lib.MemoryArtifactStore()] },
  "MemoryPreloader.constructor(options)": { args: () => [new lib.InMemoryBackend()] },
  "KvArtifactStore.constructor(options)": { args: () => [mapKv()] },
  "ToolEvent.create(init)": { base: () => ({ kind: "tool_success", toolName: "t" }) },
  "ToolInterruptHandler.constructor(options)": { base: () => ({ bridge: async () => "ok" }) },
  "ToolInterruptHandler.call(options)": { args: () => ["t", {}] },
  "EpisodeSummarizer.constructor(options)": { base: () => ({ bus: bus(), llm }) },
  "FactExtractor.constructor(options)": { base: () => ({ bus: bus(), llm, memory: new lib.InMemoryBackend() }) },
  "SessionTimeoutMonitor.constructor(options)": { base: () => ({ bus: bus() }) },
  "SleepHandler.constructor(options)": { base: () => ({ bus: bus(), llm, memory: new lib.InMemoryBackend() }) },
};

const scratchDirs = [];
/** A temporary directory, removed when the tests end. */
function scratch() {
  scratchDirs.push(mkdtempSync(join(tmpdir(), "options-drift-")));
  return scratchDirs.at(-1);
}
after(() => scratchDirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

let schema;
/** A pool on a schema of the test server (dropped after the tests). */
async function postgres() {
  schema ??= await pgSchema("drift");
  return schema.pool;
}
after(async () => schema?.drop());

/** A store holding one saved session, and that session's id. */
async function storeWithASession(owner) {
  // The factory's file system keeps nothing: a real directory here.
  const store =
    owner === "FsArtifactStore"
      ? new lib.FsArtifactStore({ baseDir: scratch() })
      : owner === "PostgresArtifactStore"
        ? new lib.PostgresArtifactStore(lib.pgConnection(await postgres()))
        : await factories[owner]();
  const session = new lib.Session();
  session.record("user_input", "hi");
  await store.saveSession(session);
  return { instance: store, args: [session.sessionId] };
}
const BUILD_A_HANDLER = ["normalizer", "artifactStore", "externalizeThreshold"];
const withBridge = (valid) => ({ ...valid, base: () => ({ ...valid.base(), bridge: async () => "ok" }) });

/**
 * Declared keys that a call with only the required keys does not read, the
 * call that reads them, and why.
 */
const READ_LATER = {
  // They build the run's tool handler with `bridge`; without one, not read.
  "runCompiled(options)": { keys: BUILD_A_HANDLER, valid: () => withBridge(VALID["runCompiled(options)"]) },
  "orchestrateCompiled(options)": { keys: BUILD_A_HANDLER, valid: () => withBridge(VALID["orchestrateCompiled(options)"]) },
  // The counter of a loaded session: read once a saved session is found.
  ...Object.fromEntries(
    ["MemoryArtifactStore", "FsArtifactStore", "KvArtifactStore", "SqliteArtifactStore", "PostgresArtifactStore"].map((owner) => [
      `${owner}.loadSession(options)`,
      { keys: ["tokenCounter"], valid: () => ({ setup: () => storeWithASession(owner) }) },
    ]),
  ),
};

/** Keys any object is asked for by the engine or by a conversion. */
const ENGINE_KEYS = new Set(["then", "toJSON", "constructor", "valueOf", "toString"]);

/**
 * An options object that records the keys read. It lists every declared key
 * (so a reader converting the whole object reads them all) and answers the
 * required ones, from `base` where given.
 */
function recorder(checker, type, base = {}) {
  const read = new Set();
  const required = new Map(Object.entries(base));
  const declared = checker.getPropertiesOfType(type).map((p) => p.name);
  for (const p of checker.getPropertiesOfType(type)) {
    if (!(p.flags & ts.SymbolFlags.Optional) && !required.has(p.name)) {
      const decl = p.valueDeclaration ?? p.declarations?.[0];
      required.set(p.name, plausible(checker, { type: checker.getTypeOfSymbolAtLocation(p, decl), optional: false }));
    }
  }
  const proxy = new Proxy(
    {},
    {
      get(_target, key) {
        if (typeof key === "string" && !ENGINE_KEYS.has(key)) read.add(key);
        return typeof key === "string" ? required.get(key) : undefined;
      },
      has(_target, key) {
        return typeof key === "string" && declared.includes(key);
      },
      ownKeys() {
        return declared;
      },
      getOwnPropertyDescriptor(_target, key) {
        return declared.includes(key) ? { value: required.get(key), enumerable: true, configurable: true, writable: true } : undefined;
      },
    },
  );
  return { proxy, read };
}

/**
 * The keys `c` reads from its parameter `i` (of options type `type`) when
 * called with `valid`'s arguments and required keys (plausible ones
 * elsewhere). A call that fails has still read its options first: the
 * reading is what is measured.
 */
async function keysRead(checker, c, i, type, valid) {
  const { proxy, read } = recorder(checker, type, valid.base?.());
  const setup = (await valid.setup?.()) ?? {};
  const given = setup.args ?? valid.args?.() ?? [];
  const args = c.params.map((p, j) => (j === i ? proxy : j < given.length ? given[j] : plausible(checker, p)));
  try {
    let result;
    if (c.kind === "constructor") result = new lib[c.owner](...args);
    else if (c.kind === "static") result = lib[c.owner][c.name](...args);
    else if (c.kind === "function") result = lib[c.name](...args);
    else result = (setup.instance ?? (await factories[c.owner]()))[c.name](...args);
    if (result instanceof Promise) await result.catch(() => {});
  } catch {
    // measured above
  }
  return read;
}

test("js/option-keys.js, which the guards check options against, is what the declarations say", () => {
  const current = readFileSync(new URL("../../js/option-keys.js", import.meta.url), "utf8");
  assert.equal(current, optionKeysModule(program()), "run `node scripts/option-keys.mjs`");
});

test("every declared option is read, and every option read is declared", async (t) => {
  const world = program();
  const all = callables(world);
  const drift = [];
  let checked = 0;
  const seen = new Set();
  for (const c of all) {
    if (c.owner !== null && factories[c.owner] === null) continue;
    if (c.kind === "function" && /^init/.test(c.name)) continue;
    for (let i = 0; i < c.params.length; i++) {
      const type = optionsType(world.checker, c.params[i].type);
      if (!type) continue;
      const label = `${c.owner ? `${c.owner}.` : ""}${c.name}(${c.params[i].name})`;
      if (seen.has(label)) continue;
      seen.add(label);
      const read = await keysRead(world.checker, c, i, type, VALID[label] ?? {});
      checked++;
      const declared = world.checker.getPropertiesOfType(type).map((p) => p.name);
      const later = READ_LATER[label];
      if (later) {
        const readLater = await keysRead(world.checker, c, i, type, later.valid());
        for (const key of later.keys) {
          if (!declared.includes(key)) drift.push(`${label}: READ_LATER names ${key}, not declared`);
          else if (!readLater.has(key)) drift.push(`${label}: declares ${key}, not read even when it is needed`);
          read.add(key);
        }
      }
      for (const key of declared) if (!read.has(key)) drift.push(`${label}: declares ${key}, never read`);
      for (const key of read) if (!declared.includes(key)) drift.push(`${label}: reads ${key}, not declared`);
    }
  }
  t.diagnostic(`${checked} options parameters checked`);
  assert.ok(checked > 30, `${checked} options parameters found in the declarations`);
  assert.deepEqual(drift, []);
});
