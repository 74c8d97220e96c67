// The TypeScript types against what the Rust side really serialises: every
// data value the package hands out (events, handles, reports, contexts,
// messages in each provider format, stats, tool events, normalised outputs,
// run results, ...) is produced here by the built package, written as
// `const v: T = <the value as a literal>` and compiled with `tsc` under
// `strict` and `exactOptionalPropertyTypes`. A field Rust adds that the type
// lacks (an excess property), a field the type requires that Rust leaves out,
// a `null` where the type says optional, or a value of another type fails
// `npm test`: drift between the two is caught, both ways.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import * as lib from "agent-context-compiler";

const root = new URL("../..", import.meta.url).pathname;
// Inside the package, so that `agent-context-compiler` resolves to itself.
mkdirSync(join(root, "target"), { recursive: true });
const dir = mkdtempSync(join(root, "target", "type-drift-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Every data value the package hands out, each with the type that describes it. */
async function samples() {
  const out = [];
  const add = (type, value) => out.push([type, value]);

  const session = new lib.Session({ sessionId: "drift" });
  add("SessionEvent", session.record("user_input", { text: "Why did the job fail?" }));
  add("SessionEvent", session.record("tool_call", { tool: "read_logs", call_id: "c1", arguments: { path: "/var/log/job" } }));
  add("SessionEvent", session.record("tool_success", { tool: "read_logs", call_id: "c1", result: "OOM at 03:12\n".repeat(400) }));
  add("SessionEvent", session.record("assistant_output", { text: "It ran out of memory." }));
  add("SessionEvent[]", session.eventLog.events);
  add("EvidencePack", session.toEvidencePack());

  const store = new lib.MemoryArtifactStore();
  const handle = await store.store("x".repeat(5000), "tool:read_logs", { mimeType: "text/plain", sessionId: "drift" });
  add("ArtifactHandle", handle);
  add("ArtifactHandle[]", await store.listHandles());
  add("SaveReport", await store.saveSession(session));

  const memory = new lib.InMemoryBackend();
  memory.store("oncall", "The job writes to db-primary", "core");
  add("MemoryEntry[]", await memory.recall("job", 5));
  const persistent = await store.openMemory("facts");
  await persistent.put({ key: "k", content: "c", category: "rule", subject: "deploy", source: "test", confidence: 0.9 });
  add("MemoryEntry[]", persistent.list());
  add("SaveReport", await persistent.save());

  for (const layout of ["single-system", "zoned"]) {
    const compiler = new lib.ContextCompiler({
      layout,
      processors: [
        new lib.HistorySelector({ keepFirst: 1, keepLast: Infinity }),
        new lib.ArtifactAttacher(store, { thresholdBytes: 1024 }),
        new lib.Compactor(),
        new lib.MemoryPreloader(memory, { topK: 2 }),
        new lib.HistoryRecall({ minDistinction: 0 }),
      ],
    });
    const ctx = await compiler.compile(session, layout === "zoned" ? 2_000 : 300, {
      systemPrompt: "You are an SRE.",
      goal: "Find why the job fails",
      policies: ["Never delete data"],
    });
    add("WorkingContextData", ctx.toJSON());
    add("DroppedItem[]", ctx.dropped);
    add("ArtifactRef[]", ctx.artifactRefs);
    add("ToolResult[]", ctx.toolResults);
    add("HistoryMessage[]", ctx.history);
    add("MemoryHit[]", ctx.memoryHits);
    add("ZoneUsage", ctx.zoneUsage);
    add("RecalledTurn[]", ctx.recalled);
    add("SearchHit[]", session.search("job fails", { limit: 3 }));
    add("Message[]", ctx.toMessages());
    add("OpenAiMessage[]", ctx.toMessages({ format: "openai" }));
    add("AnthropicRequest", ctx.toMessages({ format: "anthropic" }));
    add("AiSdkRequest", ctx.toMessages({ format: "ai-sdk" }));
    ctx.free();
  }

  const window = new lib.ContextWindow({ maxContextTokens: 400 });
  window.setSystemPrompt("sys");
  window.setGoal("Find the failure");
  window.addRecentMessage("user", "hello ".repeat(50), { importance: 0.9 });
  window.addRecentMessage("assistant", "notes ".repeat(300), { importance: 0.2 });
  add("CompiledContext", window.compile());
  add("ContextStats", window.getStats());

  const registry = new lib.SchemaRegistry();
  registry.register("calc", { type: "object", properties: { result: { type: "number" } }, required: ["result"] });
  add("ValidationResult", registry.validate("calc", { result: "x" }));
  const aligner = new lib.PerceptionAligner(registry);
  add("NormalizedOutput", aligner.normalize("calc", '{"result": "x", "token": "sk-live-0123456789abcdefghijklmnop"}'));
  add("Redaction", lib.redact("password=hunter22 and AKIAQ3T7Q3T7Q3T7Q3T7"));

  const tools = new lib.ToolInterruptHandler({
    bridge: async (name) => (name === "fail" ? Promise.reject(new Error("boom")) : name === "slow" ? new Promise(() => {}) : "y".repeat(3000)),
    session,
    artifactStore: store,
    externalizeThreshold: 1024,
  });
  add("ToolEventData", (await tools.call("read", { a: 1 })).toJSON());
  add("ToolEventData", (await tools.call("fail", {})).toJSON());
  add("ToolEventData", (await tools.call("slow", {}, { timeoutMs: 5 })).toJSON());

  const run = await lib.runCompiled("What failed?", {
    session,
    compiler: new lib.ContextCompiler({ layout: "zoned", processors: [new lib.HistorySelector()] }),
    budget: 4_000,
    model: async (_messages, { tools: specs }) => (specs.length && !run0.called ? ((run0.called = true), { content: null, tool_calls: [{ id: "t1", type: "function", function: { name: "read", arguments: "{}" } }] }) : "done"),
    tools: [{ name: "read", description: "Reads", parameters: { type: "object" } }],
    bridge: async () => "ok",
  });
  // `session` is the live Session object, not data.
  const { session: _live, ...runData } = run;
  add('Omit<T.RunResult, "session">', runData);
  add("McpToolDefinition", lib.orchestrateCompiledTool());
  add("McpCallToolResult", await lib.orchestrateCompiled({ task: "Hi", budget: 2_000 }, { model: async () => "hello" }));
  add("McpCallToolResult", await lib.orchestrateCompiled({ task: 5 }, { model: async () => "hello" }));

  const bus = new lib.EventBus();
  add("BusStats", bus.stats);
  const seen = [];
  bus.on("turn_completed", (e) => void seen.push(e));
  bus.start();
  bus.tryEmit({ type: "turn_completed", agentId: "a", sessionId: "drift", data: { text: "hi" } });
  await bus.stop();
  add("BusEvent", seen[0]);
  add("BusStats", bus.stats);
  return out;
}
const run0 = { called: false };

/** A JS value as a TypeScript literal (JSON, with `undefined` members left out). */
function literal(value) {
  return JSON.stringify(value, null, 1);
}

/** The diagnostics of compiling `source` (a module beside the package). */
function compile(source) {
  const file = join(dir, `drift-${Math.random().toString(36).slice(2)}.ts`);
  writeFileSync(file, source);
  const program = ts.createProgram([file], {
    strict: true,
    exactOptionalPropertyTypes: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    lib: ["lib.es2022.d.ts"],
    types: ["node"],
    skipLibCheck: true,
  });
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
}

test("every value the package hands out is of its declared TypeScript type", async () => {
  const values = await samples();
  assert.ok(values.length >= 45, `${values.length} values`);
  const types = new Set(values.map(([t]) => t.replace("[]", "").replace(/^Omit<T\.(\w+).*$/, "$1")));
  assert.ok(types.size >= 27, `${types.size} types: ${[...types]}`);
  const source = [
    'import type * as T from "agent-context-compiler";',
    ...values.map(([type, value], i) => `export const v${i}: ${type.startsWith("Omit<") ? type : `T.${type}`} = ${literal(value)};`),
  ].join("\n");
  const diagnostics = compile(source);
  assert.deepEqual(diagnostics, [], "the values compile against their types");
});

test("the drift check fails on an extra field, a missing field and a null where a field is optional", () => {
  const errors = (value) =>
    compile(`import type * as T from "agent-context-compiler";\nexport const v: T.ArtifactHandle = ${literal(value)};`);
  const handle = { artifactId: "a".repeat(64), sizeBytes: 1, mimeType: "text/plain", createdAt: 1, summary: "s", source: "x" };
  assert.deepEqual(errors(handle), []);
  assert.match(errors({ ...handle, addedInRust: 1 }).join("\n"), /addedInRust/);
  const { summary: _, ...missing } = handle;
  assert.match(errors(missing).join("\n"), /summary/);
  assert.match(errors({ ...handle, sessionId: null }).join("\n"), /null/);
});
