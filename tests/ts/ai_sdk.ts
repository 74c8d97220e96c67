// agent-context-compiler/ai-sdk under --strict: the run's tools become the
// AI SDK's ToolSet that generateText takes as it is.
import { generateText, type LanguageModel, type ToolSet } from "ai";
import { aiSdkTools, type AiSdkToolSpec } from "agent-context-compiler/ai-sdk";

export async function ask(model: LanguageModel, specs: AiSdkToolSpec[]): Promise<string> {
  const tools: ToolSet = aiSdkTools(specs);
  const result = await generateText({ model, prompt: "How full is /data?", tools });
  // @ts-expect-error a spec needs its parameters' schema
  aiSdkTools([{ name: "df" }]);
  return result.text;
}

import { wrapLanguageModel, type LanguageModelMiddleware } from "ai";
import { contextMiddleware, toLanguageModelPrompt, type LanguageModelPrompt } from "agent-context-compiler/ai-sdk";
import { ContextCompiler, HistorySelector, Session, type RecordedReply } from "agent-context-compiler";

/** The middleware over this package's own Session and ContextCompiler, one per thread. */
export async function chat(model: Exclude<LanguageModel, string>, sessions: Map<string, Session>): Promise<string> {
  const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity })] });
  const middleware: LanguageModelMiddleware = contextMiddleware({
    session: (id) => sessions.get(id) ?? new Session({ sessionId: id }),
    compiler,
    budget: 32_000,
    systemPrompt: "You are an SRE.",
    goal: "Keep the disks below 90%",
  });
  const single = contextMiddleware({ session: new Session(), compiler, budget: 8_000 });
  const wrapped = wrapLanguageModel({ model, middleware: [middleware, single] });
  const result = await generateText({ model: wrapped, prompt: "How full is /data?", providerOptions: { agentContextCompiler: { sessionId: "t1" } } });
  // @ts-expect-error a misspelt option is a type error too
  contextMiddleware({ session: new Session(), compiler, budget: 1, systemprompt: "x" });
  const prompt: LanguageModelPrompt = toLanguageModelPrompt({ messages: [] });
  const recorded: RecordedReply = new Session().recordReply(result);
  return `${result.text} ${prompt.length} ${recorded.toolCalls.length}`;
}
