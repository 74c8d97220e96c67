// agent-context-compiler/langchain and /openai-agents under --strict: each
// takes this package's Session and ContextCompiler and gives what its
// framework takes as it is.
import { createAgent, tool } from "langchain";
import { run, Agent } from "@openai/agents";
import { contextMiddleware } from "agent-context-compiler/langchain";
import { agentsSession } from "agent-context-compiler/openai-agents";
import { ContextCompiler, HistorySelector, Session } from "agent-context-compiler";

export async function both(agent: Agent, model: Parameters<typeof createAgent>[0]["model"]): Promise<void> {
  const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity })] });
  const sessions = new Map<string, Session>();
  const lc = createAgent({
    model,
    tools: [],
    middleware: [contextMiddleware({ session: (id) => sessions.get(id) ?? new Session({ sessionId: id }), compiler, budget: 32_000 })],
  });
  await lc.invoke({ messages: [{ role: "user", content: "hi" }] }, { configurable: { thread_id: "t" } });
  const { session, callModelInputFilter } = agentsSession({ session: new Session(), compiler, budget: 32_000, systemPrompt: "You are an SRE." });
  await run(agent, "hi", { session, callModelInputFilter });
  // @ts-expect-error a misspelt option is a type error
  agentsSession({ session: new Session(), compiler, budget: 1, sessionID: "x" });
}

import { HumanMessage, type AIMessage, type BaseMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph-checkpoint";
import { ChatOpenAI } from "@langchain/openai";
import { compileMetadata, toAnthropicLangChainMessages, type CompileMetadata } from "agent-context-compiler/langchain";
import { ArtifactAttacher, MemoryArtifactStore, SqliteArtifactStore, type WorkingContext } from "agent-context-compiler";
import { z } from "zod";

/** A user's LangChain agent as docs/integrations.md writes it: one session
 * per thread (the store's when the map has none), the look-back tools over
 * the attacher's store, each reply's compile read back. */
export async function langchainAgent(store: SqliteArtifactStore): Promise<number> {
  const artifactStore = new MemoryArtifactStore();
  const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity }), new ArtifactAttacher(artifactStore)] });
  const sessions = new Map<string, Session>();
  const readLogs = tool(async ({ path }) => `read ${path}`, { name: "read_logs", description: "Reads a log", schema: z.object({ path: z.string() }) });
  const agent = createAgent({
    model: new ChatOpenAI({ model: "gpt-4.1" }),
    tools: [readLogs],
    checkpointer: new MemorySaver(),
    middleware: [contextMiddleware({ session: (id) => sessions.get(id), compiler, budget: 32_000, store, artifactStore, lookBackTools: true, systemPrompt: "You are an SRE." })],
  });
  const result = await agent.invoke({ messages: [new HumanMessage("Why did the nightly job fail?")] }, { configurable: { thread_id: "t1" } });
  const last: BaseMessage | undefined = result.messages.at(-1);
  const metadata: CompileMetadata | undefined = compileMetadata(last);
  const fromAi = (m: AIMessage) => compileMetadata(m)?.cache.prefixTokens;
  // A resolver may be async and give null; the look-back tools may be left out.
  contextMiddleware({ session: async (id) => sessions.get(id) ?? null, compiler, budget: 8_000, store: new MemoryArtifactStore(), lookBackTools: false });
  const ctx = await compiler.compile(new Session(), 8_000, { format: "anthropic" });
  const { systemMessage, messages } = toAnthropicLangChainMessages(ctx.toMessages({ format: "anthropic" }));
  ctx.free();
  // @ts-expect-error a misspelt option is a type error
  contextMiddleware({ session: new Session(), compiler, budget: 1, artifactstore: artifactStore });
  // @ts-expect-error lookBackTools is a boolean
  contextMiddleware({ session: new Session(), compiler, budget: 1, lookBackTools: "yes" });
  // @ts-expect-error an artifact store retrieves outputs
  contextMiddleware({ session: new Session(), compiler, budget: 1, artifactStore: { retrieve: 1 } });
  return (metadata?.ledger.included.length ?? 0) + messages.length + String(systemMessage.content).length + (fromAi.length);
}

/** A user's Agents SDK agent as docs/integrations.md writes it: the look-back
 * tools beside the agent's own, each compile seen before its call. */
export async function agentsAgent(mine: Session, store: MemoryArtifactStore): Promise<string | undefined> {
  const artifactStore = new MemoryArtifactStore();
  const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity }), new ArtifactAttacher(artifactStore)] });
  const seen: number[] = [];
  const { session, callModelInputFilter, tools } = agentsSession({
    session: mine,
    compiler,
    budget: 32_000,
    store,
    artifactStore,
    lookBackTools: true,
    onCompile: (ctx) => {
      const context: WorkingContext = ctx;
      seen.push(ctx.ledger.included.length, ctx.cache?.prefixTokens ?? 0, context.zoneUsage.system);
    },
  });
  const agent = new Agent({ name: "sre", instructions: "You are an SRE.", tools: [...tools] });
  const result = await run(agent, "hi", { session, callModelInputFilter });
  // @ts-expect-error a misspelt option is a type error
  agentsSession({ session: mine, compiler, budget: 1, artifactstore: artifactStore });
  // @ts-expect-error onCompile gets a WorkingContext
  agentsSession({ session: mine, compiler, budget: 1, onCompile: (ctx: { nope: string }) => void ctx });
  // @ts-expect-error the Agents SDK session is one session, not a function of a thread
  agentsSession({ session: (id: string) => new Session({ sessionId: id }), compiler, budget: 1 });
  return result.finalOutput;
}

import { recordApprovals } from "agent-context-compiler/langchain";

/** A pause for approvals recorded from LangChain's interrupt and the Agents SDK's result. */
export async function approvalsOfBoth(session: Session, agent: Agent, interrupted: { __interrupt__?: Array<{ id?: string; value?: any }> }): Promise<number> {
  const fromLangChain = recordApprovals(session, interrupted);
  const { session: sdkSession, callModelInputFilter, recordApprovals: recordAgents } = agentsSession({ session, compiler: new ContextCompiler({ layout: "zoned", processors: [] }), budget: 8_000 });
  const result = await run(agent, "hi", { session: sdkSession, callModelInputFilter });
  const fromAgents = await recordAgents(result);
  await recordAgents(result.state);
  // @ts-expect-error a result or a state, not its interruptions
  await recordAgents(result.interruptions);
  return fromLangChain.length + fromAgents.length;
}
