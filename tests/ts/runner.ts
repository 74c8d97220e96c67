// The turn runner's and the MCP tool's types, checked by `tsc --noEmit`.
import { trace } from "@opentelemetry/api";
import { ContextCompiler, MemoryArtifactStore, Session, orchestrateCompiled, type AnthropicRequest, type OpenAiMessage, orchestrateCompiledTool, runCompiled, type McpCallToolResult, type McpToolDefinition, type RunResult, type RunStep, type ToolSpec, type PendingApproval, type ApprovalDecision } from "agent-context-compiler";

export async function useRunner(signal: AbortSignal): Promise<string> {
  const tools: ToolSpec[] = [{ name: "search", description: "Searches", parameters: { type: "object" }, timeoutMs: 500 }];
  const result: RunResult = await runCompiled("hi", {
    budget: 4000,
    systemPrompt: "Be brief.",
    model: async (_messages, { tools: offered, signal: s, step }) => {
      void [offered.length, s?.aborted, step + 1];
      return { content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "search", arguments: "{}" } }] };
    },
    tools,
    bridge: async (name: string) => `ran ${name}`,
    artifactStore: new MemoryArtifactStore(),
    guard: (input) => ({ allowed: input.length < 1000, threatLevel: "low" }),
    maxSteps: 4,
    signal,
    format: "anthropic",
  });
  const step: RunStep | undefined = result.steps[0];
  const stop: "answered" | "max_steps" | "blocked" | "approval" = result.stopReason;
  const session: Session = result.session;
  void [step?.toolEvents.length, stop, session.sessionId, result.budgetUsed, result.withinBudget];
  // Calls that wait for a person: a spec's needsApproval, a policy, and a resume.
  const paused = await runCompiled("hi", {
    budget: 100,
    model: () => "x",
    tools: [{ name: "delete_file", needsApproval: true }],
    needsApproval: (call) => call.name === "drop_table",
  });
  const waiting: PendingApproval[] = paused.pending;
  const decisions: { [callId: string]: ApprovalDecision } = {};
  for (const p of waiting) decisions[p.callId] = p.name === "delete_file" ? { approve: false, reason: "keep it" } : { approve: true, args: { path: "a" } };
  await runCompiled(null, { budget: 100, model: () => "x", session: paused.session, approvals: decisions, sync: () => undefined });
  await runCompiled({ budget: 100, model: () => "x", session: paused.session, approvals: decisions });
  void paused.superseded.map((s) => s.callId + s.eventId);
  // @ts-expect-error a rejection edits no arguments
  const edit: ApprovalDecision = { approve: false, args: {} };
  void edit;
  // An OpenTelemetry Tracer is a tracer, for a run and for a compiler.
  await runCompiled("hi", { budget: 100, model: () => "x", tracer: trace.getTracer("t"), traceContent: true });
  void new ContextCompiler({ tracer: trace.getTracer("t") });
  // @ts-expect-error a tracer starts spans
  await runCompiled("hi", { budget: 100, model: () => "x", tracer: { name: "t" } });
  // @ts-expect-error a run needs a budget
  await runCompiled("hi", { model: () => "x" });
  // @ts-expect-error a model returns text or a reply object
  await runCompiled("hi", { budget: 10, model: () => 42 });
  // The model gets the messages in its format's shape: OpenAI's by default.
  await runCompiled("hi", { budget: 100, model: (messages) => messages[0]?.role ?? "" });
  await runCompiled("hi", { budget: 100, model: (messages: OpenAiMessage[]) => String(messages.length) });
  await runCompiled("hi", { budget: 100, format: "anthropic", model: (messages) => String(messages.system?.[0]?.text) });
  await runCompiled("hi", { budget: 100, format: "anthropic", model: (messages: AnthropicRequest) => String(messages.messages.length) });
  // @ts-expect-error an Anthropic request is not an array of messages
  await runCompiled("hi", { budget: 100, format: "anthropic", model: (messages: OpenAiMessage[]) => String(messages.length) });
  // @ts-expect-error format names one of the known shapes
  await runCompiled("hi", { budget: 100, format: "bard", model: () => "x" });
  // A model may stream (streaming.ts checks the provider SDKs' streams).
  await runCompiled("hi", { budget: 100, model: async function* () { yield "text"; }, onDelta: (d) => void (d.type === "text" ? d.text : d.argumentsDelta) });
  // @ts-expect-error streamFormat names a known stream shape
  await runCompiled("hi", { budget: 100, streamFormat: "sse", model: () => "x" });
  new Session().recordUsage({ prompt_tokens: 10, completion_tokens: 2 }, { countedTokens: 9 });
  const definition: McpToolDefinition = orchestrateCompiledTool();
  const called: McpCallToolResult = await orchestrateCompiled({ task: "t", budget: 100 }, { model: () => "ok" });
  return `${definition.name}: ${called.isError ? "error" : called.structuredContent?.session_id}`;
}

export async function choices(): Promise<void> {
  await runCompiled("hi", { budget: 100, model: (_m, { toolChoice }) => JSON.stringify(toolChoice ?? null), tools: [{ name: "t" }], toolChoice: { name: "t" } });
  await runCompiled("hi", { budget: 100, model: () => "x", toolChoice: "required" });
  // @ts-expect-error a tool choice is one of the known words or { name }
  await runCompiled("hi", { budget: 100, model: () => "x", toolChoice: "any" });
}
