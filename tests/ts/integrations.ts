// agent-context-compiler/langchain and /openai-agents under --strict: each
// takes this package's Session and ContextCompiler and gives what its
// framework takes as it is.
import { createAgent } from "langchain";
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
