// The package's declared API, read from its own declarations (js/node.d.ts)
// with the TypeScript compiler: every exported callable with its parameters'
// types, a live instance of each class, and a plausible value for a
// parameter. Shared by the tests that call the whole API from its types.
import ts from "typescript";
import { fileURLToPath } from "node:url";
import initSqlJs from "sql.js";
import * as lib from "agent-context-compiler";
import { mapKv } from "../conformance/kv_adapters.mjs";

export const declarations = fileURLToPath(new URL("../../js/node.d.ts", import.meta.url));
const SQL = await initSqlJs();

/** The program over the declarations, and the types of the variables `CANDIDATES` declares. */
export function program(CANDIDATES = "") {
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
 * "constructor" | "method" | "static", params: [{ name, type, optional }],
 * async (whether it returns a promise) }].
 */
export function callables({ p, checker }) {
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
  const returnsPromise = (sig) => checker.getReturnTypeOfSignature(sig).getSymbol()?.name === "Promise";
  for (let symbol of checker.getExportsOfModule(module)) {
    if (symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    const name = symbol.name;
    if (symbol.flags & ts.SymbolFlags.Class) {
      const classType = checker.getTypeOfSymbol(symbol);
      for (const sig of classType.getConstructSignatures()) out.push({ owner: name, name: "constructor", kind: "constructor", params: paramsOf(sig), async: false });
      for (const member of checker.getPropertiesOfType(classType)) {
        if (member.name === "prototype") continue;
        for (const sig of checker.getTypeOfSymbol(member).getCallSignatures()) out.push({ owner: name, name: member.name, kind: "static", params: paramsOf(sig), async: returnsPromise(sig) });
      }
      const instance = checker.getDeclaredTypeOfSymbol(symbol);
      for (const member of checker.getPropertiesOfType(instance)) {
        if (!(member.flags & ts.SymbolFlags.Method) || member.name === "free" || member.name.startsWith("__")) continue;
        for (const sig of checker.getTypeOfSymbol(member).getCallSignatures()) out.push({ owner: name, name: member.name, kind: "method", params: paramsOf(sig), async: returnsPromise(sig) });
      }
    } else if (symbol.flags & ts.SymbolFlags.Function) {
      for (const sig of checker.getTypeOfSymbol(symbol).getCallSignatures()) out.push({ owner: null, name, kind: "function", params: paramsOf(sig), async: returnsPromise(sig) });
    }
  }
  return out;
}

/** A live instance of each exported class, made as a user would. */
export const factories = {
  ArtifactAttacher: () => new lib.ArtifactAttacher(new lib.MemoryArtifactStore()),
  Compactor: () => new lib.Compactor(),
  ContextCompiler: () => new lib.ContextCompiler({ processors: [new lib.HistorySelector()] }),
  ContextWindow: () => new lib.ContextWindow({ maxContextTokens: 1000 }),
  EventLog: () => new lib.EventLog(),
  HistorySelector: () => new lib.HistorySelector(),
  HistoryRecall: () => new lib.HistoryRecall(),
  InMemoryBackend: () => new lib.InMemoryBackend(),
  MemoryArtifactStore: () => new lib.MemoryArtifactStore(),
  MemoryPreloader: () => new lib.MemoryPreloader(new lib.InMemoryBackend()),
  PerceptionAligner: () => new lib.PerceptionAligner(new lib.SchemaRegistry()),
  PersistentMemory: () => new lib.MemoryArtifactStore().openMemory("m"),
  SchemaRegistry: () => new lib.SchemaRegistry(),
  Session: () => new lib.Session(),
  TokenBudget: () => new lib.TokenBudget(1000),
  ToolEvent: () => lib.ToolEvent.create({ kind: "tool_success", toolName: "t", result: "ok" }),
  ToolInterruptHandler: () => new lib.ToolInterruptHandler({ bridge: async () => "ok", session: new lib.Session() }),
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
  // Its methods run against a real server in tests/js/postgres_store.test.mjs.
  PostgresArtifactStore: () => new lib.PostgresArtifactStore({ query: async () => [], batch: async () => {} }),
};

/** A plausible value of `type` for the parameters not under test. */
export function plausible(checker, param) {
  const text = checker.typeToString(param.type);
  if (param.optional) return undefined;
  if (/^(number|TokenBudget|number \| TokenBudget)$/.test(text)) return 100;
  if (text === "string") return "x";
  if (text === "boolean") return true;
  const literals = (param.type.isUnion() ? param.type.types : [param.type]).filter((t) => t.isStringLiteral());
  if (literals.length > 0) return literals[0].value;
  if (text === "Session") return new lib.Session();
  if (/Uint8Array|ArrayBuffer/.test(text)) return "bytes";
  if (/Array|\[\]/.test(text)) return [];
  if (/=>/.test(text)) return () => {};
  return {};
}


/** The plain object type (an options object) in `type`, if it has one. */
export function optionsType(checker, type) {
  const parts = (type.isUnion() ? type.types : [type]).filter((t) => !(t.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined)));
  if (parts.length !== 1) return null;
  const [t] = parts;
  if (!(t.flags & ts.TypeFlags.Object) || t.getCallSignatures().length > 0) return null;
  const symbol = t.getSymbol();
  if (symbol && symbol.flags & ts.SymbolFlags.Class) return null;
  if (checker.isArrayType(t) || checker.isTupleType(t)) return null;
  const props = checker.getPropertiesOfType(t);
  if (props.length === 0 || props.some((p) => p.flags & ts.SymbolFlags.Method)) return null;
  return t;
}

/** The parameters that are options objects (by their declared names). */
const OPTIONS_PARAMETERS = new Set(["options", "init", "filter"]);

/**
 * The options each callable takes, by the label its guard gives it (a
 * constructor by its class, a method or static by `Class.method`, a
 * function by its name): `[[parameter index, declared keys, async]]`. An
 * options type with an index signature takes any key and is left out.
 */
export function optionKeys({ p, checker }) {
  const table = {};
  for (const c of callables({ p, checker })) {
    const label = c.kind === "constructor" ? c.owner : c.owner ? `${c.owner}.${c.name}` : c.name;
    c.params.forEach((param, index) => {
      // Options, not data: an event, a memory entry or a bus is not checked.
      if (!OPTIONS_PARAMETERS.has(param.name)) return;
      const type = optionsType(checker, param.type);
      if (!type || checker.getIndexInfosOfType(type).length > 0) return;
      const keys = checker.getPropertiesOfType(type).map((k) => k.name);
      const entries = (table[label] ??= []);
      const entry = entries.find((e) => e[0] === index);
      if (entry) entry[1] = [...new Set([...entry[1], ...keys])].sort();
      else entries.push([index, keys.sort(), c.async]);
    });
  }
  return Object.fromEntries(Object.entries(table).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** `js/option-keys.js` as `optionKeys` makes it. */
export function optionKeysModule(world) {
  const lines = Object.entries(optionKeys(world)).map(([label, entries]) => `  ${JSON.stringify(label)}: ${JSON.stringify(entries)},`);
  return `// Generated by scripts/option-keys.mjs from js/node.d.ts (do not edit):
// the options object each guarded callable takes, as [parameter index,
// declared keys, returns a promise]. tests/js/options_drift.test.mjs fails
// when it is not what the declarations say.
export const OPTION_KEYS = {
${lines.join("\n")}
};
`;
}
