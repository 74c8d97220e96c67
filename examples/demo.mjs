// The seed's demo (Task 12) in Node: a session, a 10 KB tool output, compile
// before and after externalisation, the handle retrieved and compared with the
// original, and the compiled messages.
import {
  ArtifactAttacher, Compactor, ContextCompiler, HistorySelector, MemoryArtifactStore, Session,
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

console.log(`\n${line}`);
console.log("Demo complete. Large tool output externalized, handle in prompt.");
console.log(line);
if (!matches || !after.isWithinBudget() || after.artifactRefs.length !== 1) process.exit(1);
