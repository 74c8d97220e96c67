// The seed's demo (Task 12) in Node: a session, a 10 KB tool output, compile
// before and after externalisation, the handle retrieved and compared with the
// original, and the compiled messages.
import {
  ArtifactAttacher, Compactor, ContextCompiler, HistorySelector, MemoryArtifactStore, PerceptionAligner,
  SchemaRegistry, Session, ToolInterruptHandler,
} from "agent-context-compiler";

const line = "=".repeat(60);
const BUDGET = 500;
const SYSTEM = "You are a log analysis assistant.";

console.log(line);
console.log("Context Compiler Demo");
console.log(line);

const store = new MemoryArtifactStore();
const session = new Session();
console.log(`\nArtifact store: in memory (content-addressed, SHA-256)`);
console.log(`Session ID: ${session.sessionId}`);

session.record("user_input", { text: "Analyze the system logs and summarize errors" });
const largeOutput = "ERROR 2026-02-27 10:15:32 [worker-7] Connection timeout to db-primary\n".repeat(140);
console.log(`\nSimulated tool output: ${largeOutput.length} bytes (${largeOutput.split(/\s+/).filter(Boolean).length} words)`);
session.record("tool_success", { tool: "log_reader", result: largeOutput });

function report(title, ctx) {
  console.log(`\n--- ${title} ---`);
  console.log(`Token count: ${ctx.tokenCount}`);
  console.log(`Within budget (${BUDGET}): ${ctx.isWithinBudget()}`);
  console.log(`Tool results: ${ctx.toolResults.length} (inline in the prompt)`);
  console.log(`Artifact refs: ${ctx.artifactRefs.length}`);
  const truncated = ctx.dropped.filter((d) => d.action === "truncated");
  if (truncated.length) {
    const lost = truncated.reduce((n, d) => n + d.tokensRemoved, 0);
    console.log(`Fitted to the budget by truncating ${truncated.length} item(s): ${lost} tokens of the raw output cut`);
  }
}

// Before: history and tool results, no externalisation. The compiler still
// never exceeds the budget, so the raw output has to be truncated.
const before = await new ContextCompiler({
  processors: [new HistorySelector({ keepFirst: 2, keepLast: 3 }), new Compactor()],
}).compile(session, BUDGET, { systemPrompt: SYSTEM });
report("BEFORE externalization", before);
const unbounded = await new ContextCompiler({
  processors: [new HistorySelector({ keepFirst: 2, keepLast: 3 }), new Compactor()],
}).compile(session, 1_000_000, { systemPrompt: SYSTEM });
console.log(`(Without a budget the same context would be ${unbounded.tokenCount} tokens: ${unbounded.tokenCount - BUDGET} over.)`);

// After: the ArtifactAttacher stores the output and keeps a handle.
const after = await new ContextCompiler({
  processors: [
    new HistorySelector({ keepFirst: 2, keepLast: 3 }),
    new Compactor(),
    new ArtifactAttacher(store, { thresholdBytes: 1024 }),
  ],
}).compile(session, BUDGET, { systemPrompt: SYSTEM });
report("AFTER externalization", after);

const ref = after.artifactRefs[0];
console.log(`\n  Handle: ${ref.handle.slice(0, 16)}...`);
console.log(`  Summary: ${ref.summary.slice(0, 80)}...`);
console.log(`  Size: ${ref.sizeBytes} bytes`);
const data = await store.retrieve(ref.handle);
const matches = new TextDecoder().decode(data) === largeOutput;
console.log(`  Retrieved: ${data.length} bytes (matches original: ${matches})`);
console.log(`  Session events: ${session.eventLog.events.map((e) => e.kind).join(", ")}`);

console.log("\n--- Compiled messages for LLM ---");
after.toMessages().forEach((m, i) => {
  const content = m.content.length > 200 ? `${m.content.slice(0, 200)}...` : m.content;
  console.log(`  [${i}] ${m.role}: ${content}`);
});

// Part two: the recommended setup on a small agent loop. Tools go through the
// ToolInterruptHandler, the zoned layout keeps the prompt's prefix the same
// from call to call (a large output is whole in the call right after the
// tool ran, for the model to read, and its handle from then on), and
// messages come out in the provider's own shape.
console.log("\n--- Agent loop, zoned layout ---");
const agent = new Session();
const tools = new ToolInterruptHandler({
  session: agent,
  normalizer: new PerceptionAligner(new SchemaRegistry()),
  artifactStore: store,
  externalizeThreshold: 4096,
  bridge: async (name, args) => (name === "read_logs" ? largeOutput : `${name} ok: ${JSON.stringify(args)}`),
});
const zoned = new ContextCompiler({
  layout: "zoned",
  processors: [
    new HistorySelector({ keepFirst: 1, keepLast: Infinity }),
    new ArtifactAttacher(store, { thresholdBytes: 4096 }),
    new Compactor(),
  ],
});
const options = { systemPrompt: SYSTEM, goal: "Find why the workers time out", toolDefinitions: [{ name: "read_logs" }, { name: "ping" }] };
let previous = [];
let openai;
for (const [turn, [tool, args]] of [["read_logs", { path: "/var/log/worker.log" }], ["ping", { host: "db-primary" }], ["ping", { host: "db-replica" }]].entries()) {
  agent.record("user_input", { text: `Step ${turn + 1}: check ${args.path ?? args.host}` });
  agent.record("assistant_output", { text: `Calling ${tool}.` });
  await tools.call(tool, args, { timeoutMs: 5000 });
  const ctx = await zoned.compile(agent, 4_000, options);
  openai = ctx.toMessages({ format: "openai" });
  const texts = openai.map((m) => JSON.stringify(m));
  let same = 0;
  while (same < previous.length - 1 && texts[same] === previous[same]) same++;
  console.log(`Call ${turn + 1}: ${ctx.tokenCount} tokens (system ${ctx.zoneUsage.system}, persistent ${ctx.zoneUsage.persistent}, working ${ctx.zoneUsage.working}, recent ${ctx.zoneUsage.recent}); ${same} of the previous call's ${Math.max(previous.length - 1, 0)} messages reused as the prefix`);
  previous = texts;
  ctx.free();
}
const call = openai.find((m) => m.tool_calls);
const result = openai.find((m) => m.role === "tool" && m.tool_call_id === call.tool_calls[0].id);
console.log(`OpenAI messages: ${openai.length}; first tool call ${call.tool_calls[0].function.name}(${call.tool_calls[0].function.arguments}) answered by: ${result.content.slice(0, 90)}...`);

console.log(`\n${line}`);
console.log("Demo complete. Large tool output externalized, handle in prompt.");
console.log(line);
if (!matches || !after.isWithinBudget() || after.artifactRefs.length !== 1 || !result) process.exit(1);
