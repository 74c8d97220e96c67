// Every exported function, constructor and method, read from the package's
// own declarations (js/node.d.ts, with the TypeScript compiler), called with
// a value of the wrong type in each parameter in turn (the others given
// plausible values): each call either throws or rejects with a coded error,
// or takes the value (null or undefined for an optional parameter), and every
// WebAssembly instance lives on. A wasm-bindgen `&str` parameter given a
// number once read memory out of bounds and closed the module.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import initSqlJs from "sql.js";
import * as lib from "agent-context-compiler";
import { mapKv } from "../conformance/kv_adapters.mjs";

const declarations = fileURLToPath(new URL("../../js/node.d.ts", import.meta.url));
const SQL = await initSqlJs();

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

/** The program over the declarations, and the candidates' types. */
function program() {
  const candidates = "/candidates.ts";
  const host = ts.createCompilerHost({ strict: true });
  const read = host.readFile.bind(host);
  const getSource = host.getSourceFile.bind(host);
  host.readFile = (f) => (f === candidates ? CANDIDATES : read(f));
  host.fileExists = ((exists) => (f) => f === candidates || exists(f))(host.fileExists.bind(host));
  host.getSourceFile = (f, v, ...rest) =>
    f === candidates ? ts.createSourceFile(f, CANDIDATES, v) : getSource(f, v, ...rest);
  const p = ts.createProgram([declarations, candidates], { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext }, host);
  const checker = p.getTypeChecker();
  const types = {};
  ts.forEachChild(p.getSourceFile(candidates), (node) => {
    if (ts.isVariableStatement(node)) {
      for (const d of node.declarationList.declarations) types[d.name.text] = checker.getTypeAtLocation(d);
    }
  });
  return { p, checker, types };
}

/**
 * Every callable the package exports: [{ owner, name, kind: "function" |
 * "constructor" | "method" | "static", params: [{ name, type, optional }] }].
 */
function callables({ p, checker }) {
  const module = checker.getSymbolAtLocation(p.getSourceFile(declarations));
  const out = [];
  const paramsOf = (signature) =>
    signature.getParameters().map((s) => {
      const decl = s.valueDeclaration;
      return {
        name: s.name,
        type: checker.getTypeOfSymbolAtLocation(s, decl),
        optional: Boolean(decl.questionToken || decl.initializer || decl.dotDotDotToken),
      };
    });
  for (let symbol of checker.getExportsOfModule(module)) {
    if (symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    const name = symbol.name;
    if (symbol.flags & ts.SymbolFlags.Class) {
      const classType = checker.getTypeOfSymbol(symbol);
      for (const sig of classType.getConstructSignatures()) out.push({ owner: name, name: "constructor", kind: "constructor", params: paramsOf(sig) });
      for (const member of checker.getPropertiesOfType(classType)) {
        if (member.name === "prototype") continue;
        for (const sig of checker.getTypeOfSymbol(member).getCallSignatures()) out.push({ owner: name, name: member.name, kind: "static", params: paramsOf(sig) });
      }
      const instance = checker.getDeclaredTypeOfSymbol(symbol);
      for (const member of checker.getPropertiesOfType(instance)) {
        if (!(member.flags & ts.SymbolFlags.Method) || member.name === "free" || member.name.startsWith("__")) continue;
        for (const sig of checker.getTypeOfSymbol(member).getCallSignatures()) out.push({ owner: name, name: member.name, kind: "method", params: paramsOf(sig) });
      }
    } else if (symbol.flags & ts.SymbolFlags.Function) {
      for (const sig of checker.getTypeOfSymbol(symbol).getCallSignatures()) out.push({ owner: null, name, kind: "function", params: paramsOf(sig) });
    }
  }
  return out;
}

/** A live instance of each exported class, made as a user would. */
const factories = {
  ArtifactAttacher: () => new lib.ArtifactAttacher(new lib.MemoryArtifactStore()),
  Compactor: () => new lib.Compactor(),
  ContextCompiler: () => new lib.ContextCompiler({ processors: [new lib.HistorySelector()] }),
  ContextWindow: () => new lib.ContextWindow({ maxContextTokens: 1000 }),
  EventLog: () => new lib.EventLog(),
  HistorySelector: () => new lib.HistorySelector(),
  InMemoryBackend: () => new lib.InMemoryBackend(),
  MemoryArtifactStore: () => new lib.MemoryArtifactStore(),
  MemoryPreloader: () => new lib.MemoryPreloader(new lib.InMemoryBackend()),
  PerceptionAligner: () => new lib.PerceptionAligner(new lib.SchemaRegistry()),
  PersistentMemory: () => new lib.MemoryArtifactStore().openMemory("m"),
  SchemaRegistry: () => new lib.SchemaRegistry(),
  Session: () => new lib.Session(),
  TokenBudget: () => new lib.TokenBudget(1000),
  ToolEvent: () => lib.ToolEvent.create({ kind: "tool_success", toolName: "t", result: "ok" }),
  ToolInterruptHandler: () => new lib.ToolInterruptHandler({ bridge: async () => "ok" }),
  WorkingContext: () => new lib.WorkingContext({ systemPrompt: "s" }),
  EpisodeSummarizer: () => new lib.EpisodeSummarizer({ bus: new lib.EventBus(), llm: async () => "s" }),
  EventBus: () => new lib.EventBus(),
  FactExtractor: () => new lib.FactExtractor({ bus: new lib.EventBus(), llm: async () => "[]", memory: new lib.InMemoryBackend() }),
  SessionTimeoutMonitor: () => new lib.SessionTimeoutMonitor({ bus: new lib.EventBus() }),
  SleepHandler: () => new lib.SleepHandler({ bus: new lib.EventBus(), llm: async () => "s", memory: new lib.InMemoryBackend() }),
  FsArtifactStore: () => new lib.FsArtifactStore({ baseDir: "unused", files: { read: async () => null, write: async () => {}, remove: async () => {}, list: async () => [] } }),
  IndexedDbArtifactStore: null, // browsers only: its methods are exercised in tests/js/browser.test.mjs
  KvArtifactStore: () => new lib.KvArtifactStore(mapKv()),
  SqliteArtifactStore: () => new lib.SqliteArtifactStore(lib.sqlConnection(new SQL.Database())),
};

/** A plausible value of `type` for the parameters not under test. */
function plausible(checker, param) {
  const text = checker.typeToString(param.type);
  if (param.optional) return undefined;
  if (/^(number|TokenBudget|number \| TokenBudget)$/.test(text)) return 100;
  if (text === "string") return "x";
  if (text === "boolean") return true;
  if (text === "Session") return new lib.Session();
  if (/Uint8Array|ArrayBuffer/.test(text)) return "bytes";
  if (/Array|\[\]/.test(text)) return [];
  if (/=>/.test(text)) return () => {};
  return {};
}

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
  const world = program();
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
