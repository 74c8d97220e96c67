// Parity of the WebAssembly component with the npm API: every option the
// TypeScript API declares (js/option-keys.js, which options_drift.test.mjs
// keeps equal to js/node.d.ts) has its counterpart in wit/: a field of the
// record or a parameter of the function it maps to (camelCase to kebab-case,
// JSON values as `<name>-json`), or an import for a callback. What cannot
// cross is in a short allow-list, each entry with its reason; an entry that
// is stale (the option is gone, or now has a counterpart) fails too.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { OPTION_KEYS } from "../../js/option-keys.js";

const witDir = new URL("../../wit/", import.meta.url);

/** The WIT package read loosely: per interface, its records' fields,
 * variants' cases and functions' parameters; the worlds' imports. */
export function readWit(texts) {
  const places = new Map(); // "iface.name" -> Set of member names
  const imports = new Set();
  for (const raw of texts) {
    const text = raw.replace(/\/\/[^\n]*/g, "");
    for (const m of text.matchAll(/interface\s+([a-z0-9-]+)\s*\{([\s\S]*?)\n\}/g)) {
      const [, iface, body] = m;
      for (const r of body.matchAll(/(record|variant)\s+([a-z0-9-]+)\s*\{([^}]*)\}/g)) {
        const members = [...r[3].matchAll(/^\s*%?([a-z0-9-]+)\s*[:(,]/gm)].map((x) => x[1]);
        const bare = [...r[3].matchAll(/^\s*%?([a-z0-9-]+)\s*,?\s*$/gm)].map((x) => x[1]);
        places.set(`${iface}.${r[2]}`, new Set([...members, ...bare]));
      }
      for (const f of body.matchAll(/%?([a-z0-9-]+)\s*:\s*(?:static\s+)?func\(([^)]*)\)/g)) {
        const params = [...f[2].matchAll(/([a-z0-9-]+)\s*:/g)].map((x) => x[1]);
        places.set(`${iface}.${f[1]}`, new Set(params));
      }
      for (const c of body.matchAll(/constructor\(([^)]*)\)/g)) {
        places.set(`${iface}.constructor`, new Set([...c[1].matchAll(/([a-z0-9-]+)\s*:/g)].map((x) => x[1])));
      }
    }
    for (const w of text.matchAll(/world\s+[a-z0-9-]+\s*\{([\s\S]*?)\n\}/g)) {
      for (const i of w[1].matchAll(/import\s+([a-z0-9-]+)\s*;/g)) imports.add(i[1]);
    }
  }
  return { places, imports };
}

const kebab = (key) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** Where each callable's options land in the WIT. */
const PARITY = {
  ContextCompiler: ["compiler.compile-options", "compiler.compile-with"],
  "ContextCompiler.compile": ["compiler.compile-options"],
  ContextWindow: ["context-window.create"],
  "ContextWindow.addRecentMessage": ["context-window.add-recent-message"],
  "ContextWindow.appendMessage": ["context-window.append-message"],
  "ContextWindow.appendToolResult": ["context-window.append-tool-result"],
  EventBus: ["bus.bus-options"],
  FsArtifactStore: ["artifact-store.backend-options"],
  KvArtifactStore: ["artifact-store.backend-options"],
  "/ArtifactStore\\.store$/": ["artifact-store.store-options"],
  "/ArtifactStore\\.loadSession$/": ["session-store.load"],
  HistoryRecall: ["compiler.history-recall-options"],
  HistorySelector: ["compiler.history-selector-options"],
  MemoryPreloader: ["compiler.memory-preloader-options"],
  ArtifactAttacher: ["compiler.artifact-attacher-options"],
  Compactor: ["compiler.compactor-options"],
  Session: ["sessions.constructor"],
  "Session.attachBus": ["bus.attach-options"],
  "Session.importJson": ["sessions.import-json"],
  "Session.record": ["sessions.record-options"],
  "Session.recordUsage": ["sessions.usage-options"],
  "Session.recordCompaction": ["sessions.record-compaction"],
  "Session.search": ["sessions.search"],
  "Session.lookBack": ["sessions.look-back"],
  "Session.sync": ["session-store.sync-options"],
  ToolInterruptHandler: ["tools.call-tool", "tools.call-options"],
  "ToolInterruptHandler.call": ["tools.call-options"],
  "WorkingContext.toMessages": ["compiler.format-options"],
  checkRequest: ["compiler.format-options"],
  attachMedia: ["artifact-store.attach-options"],
  runCompiled: ["runner.run-options", "runner.run"],
  orchestrateCompiled: ["runner.run-options", "runner.orchestrate"],
};

/** Options whose counterpart has another name: an import (a callback the
 * host supplies) or another member. */
const ALIASES = {
  "EventBus.onError": "bus.handler-failure", // drain returns the failures
  "FsArtifactStore.baseDir": "artifact-store.backend#files",
  "ToolInterruptHandler.artifactStore": "artifact-store.select", // the selected store
  "Session.lookBack.artifactStore": "artifact-store.select",
  "ToolInterruptHandler.bridge": "import:tool-bridge",
  "ToolInterruptHandler.normalizer": "tools.call-tool#schemas",
  "ToolInterruptHandler.session": "tools.call-tool#target",
  "runCompiled.model": "import:model",
  "runCompiled.bridge": "import:tool-bridge",
  "runCompiled.toolHandler": "import:tool-bridge",
  "orchestrateCompiled.model": "import:model",
  "orchestrateCompiled.bridge": "import:tool-bridge",
  "orchestrateCompiled.toolHandler": "import:tool-bridge",
};

/** What cannot cross, and why. */
const CANNOT_CROSS = {
  // JS objects: a component host traces, signals and streams around its calls.
  "ContextCompiler.tracer": "an OpenTelemetry tracer object; a host traces around the component's calls",
  "ContextCompiler.compile.tracer": "as ContextCompiler.tracer",
  "runCompiled.tracer": "an OpenTelemetry tracer object",
  "runCompiled.sync": "a JS callback; the component's host syncs the session resource (`session.sync`) before `runner.resume`",
  "orchestrateCompiled.sync": "as runCompiled.sync",
  "runCompiled.traceContent": "goes with the tracer",
  "runCompiled.providerName": "goes with the tracer",
  "runCompiled.agentName": "goes with the tracer",
  "orchestrateCompiled.providerName": "goes with the tracer",
  "orchestrateCompiled.agentName": "goes with the tracer",
  "orchestrateCompiled.tracer": "an OpenTelemetry tracer object",
  "orchestrateCompiled.traceContent": "goes with the tracer",
  "runCompiled.signal": "an AbortSignal: the component's calls are synchronous; a host stops a run by failing its model or tool import",
  "orchestrateCompiled.signal": "as runCompiled.signal",
  "runCompiled.onDelta": "streaming: the model import answers a whole reply (a host reads its provider's stream itself)",
  "orchestrateCompiled.onDelta": "as runCompiled.onDelta",
  "runCompiled.streamFormat": "as runCompiled.onDelta",
  "orchestrateCompiled.streamFormat": "as runCompiled.onDelta",
  // Token counters: the component counts with its built-in counter.
  "ContextWindow.tokenCounter": "a JS counter function; the component counts with its built-in counter",
  "Session.tokenCounter": "as ContextWindow.tokenCounter",
  "Session.importJson.tokenCounter": "as ContextWindow.tokenCounter",
  "/ArtifactStore\\.loadSession\\.tokenCounter$/": "as ContextWindow.tokenCounter",
  // Host-side time limits: the imports are synchronous, the host bounds them.
  "EventBus.handlerTimeoutMs": "bus handlers are synchronous host calls; the host bounds them",
  "FsArtifactStore.timeoutMs": "store calls are synchronous host (or WASI) calls; the host bounds them",
  "KvArtifactStore.timeoutMs": "as FsArtifactStore.timeoutMs",
  "FsArtifactStore.files": "an injected fs module; the component writes through WASI",
};

/** Callables with no counterpart at all, and why. */
const NOT_IN_COMPONENT = {
  EpisodeSummarizer: "the background memory loop runs beside the npm package's bus (LLM callbacks, timers)",
  FactExtractor: "as EpisodeSummarizer",
  SleepHandler: "as EpisodeSummarizer",
  SessionTimeoutMonitor: "as EpisodeSummarizer",
  EventLog: "the component's log is its session (sessions.session)",
  "EventLog.append": "as EventLog",
  "IndexedDbArtifactStore.open": "a browser store; a component host gives its own store through artifact-kv",
  "InMemoryBackend.list": "memories cross as a list with each compile (compiler.memory)",
  "PersistentMemory.list": "as InMemoryBackend.list",
  "ToolEvent.create": "tool events cross as JSON (tools.call-tool's result)",
  WorkingContext: "a context crosses as its JSON (compiled.context-json), which to-messages and ledger read",
  init: "loading the npm package's modules",
};

/** The entry of `table` for `name`: exact, or a /regex/ key matching it. */
function lookup(table, name) {
  if (name in table) return table[name];
  for (const [k, v] of Object.entries(table)) {
    if (k.startsWith("/") && new RegExp(k.slice(1, -1)).test(name)) return v;
  }
  return undefined;
}

/** Every mismatch between the declared options and `wit`. */
export function mismatches(optionKeys, wit) {
  const out = [];
  const exists = (place) => {
    if (place.startsWith("import:")) return wit.imports.has(place.slice(7));
    const [where, member] = place.split("#");
    const set = wit.places.get(where);
    return set !== undefined && (member === undefined || set.has(member));
  };
  const usedAllow = new Set();
  for (const [callable, params] of Object.entries(optionKeys)) {
    if (lookup(NOT_IN_COMPONENT, callable) !== undefined) continue;
    const places = lookup(PARITY, callable);
    if (places === undefined) {
      out.push(`${callable}: no WIT counterpart and not in NOT_IN_COMPONENT`);
      continue;
    }
    for (const place of places) if (!exists(place)) out.push(`${callable}: ${place} is not in the WIT`);
    const members = new Set(places.flatMap((p) => [...(wit.places.get(p) ?? [])]));
    for (const [, keys] of params) {
      for (const key of keys) {
        const name = `${callable}.${key}`;
        const alias = ALIASES[name];
        if (members.has(kebab(key)) || members.has(`${kebab(key)}-json`)) {
          if (lookup(CANNOT_CROSS, name) !== undefined) out.push(`${name}: allow-listed but has a counterpart`);
          continue;
        }
        if (alias !== undefined) {
          if (!exists(alias)) out.push(`${name}: alias ${alias} is not in the WIT`);
          continue;
        }
        if (lookup(CANNOT_CROSS, name) !== undefined) {
          usedAllow.add(Object.keys(CANNOT_CROSS).find((k) => k === name || (k.startsWith("/") && new RegExp(k.slice(1, -1)).test(name))));
          continue;
        }
        out.push(`${name}: no counterpart (${kebab(key)} in ${places.join(", ")})`);
      }
    }
  }
  for (const k of Object.keys(CANNOT_CROSS)) if (!usedAllow.has(k)) out.push(`allow-list entry ${k} is stale`);
  return out;
}

const witTexts = () =>
  readdirSync(witDir)
    .filter((f) => f.endsWith(".wit"))
    .map((f) => readFileSync(new URL(f, witDir), "utf8"));

test("every declared option of the npm API has its counterpart in the WIT", () => {
  const wit = readWit(witTexts());
  assert.ok(wit.places.size > 50, "the WIT was read");
  assert.deepEqual(mismatches(OPTION_KEYS, wit), []);
});

test("the parity check fails on an option the WIT lacks, and on a stale allow-list entry", () => {
  const texts = witTexts().map((t) => t.replace(/^\s*reserve-output: option<u64>,\n/m, ""));
  const found = mismatches(OPTION_KEYS, readWit(texts));
  assert.ok(found.some((m) => m.startsWith("ContextCompiler.compile.reserveOutput: no counterpart")), found.join("\n"));
  const withSignal = readWit(witTexts().map((t) => t.replace("budget: u64,\n", "budget: u64,\n        signal: bool,\n")));
  const stale = mismatches(OPTION_KEYS, withSignal);
  assert.ok(stale.some((m) => m.startsWith("runCompiled.signal: allow-listed but has a counterpart")), stale.join("\n"));
  const extra = { ...OPTION_KEYS, NewThing: [[0, ["shiny"], false]] };
  assert.ok(mismatches(extra, readWit(witTexts())).includes("NewThing: no WIT counterpart and not in NOT_IN_COMPONENT"));
});
