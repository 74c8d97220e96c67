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

import { isStepCount, jsonSchema, streamText, tool, type JSONSchema7, type StepResult } from "ai";
import { trace } from "@opentelemetry/api";
import { compileMetadata, lookBackTools, type CompileMetadata, type LookBackToolSet } from "agent-context-compiler/ai-sdk";
import { ArtifactAttacher, MemoryArtifactStore, FsArtifactStore, type Ledger } from "agent-context-compiler";
import { specs } from "./tool_specs.js";

/** A user's agent as docs/integrations.md writes it: the middleware, the app's
 * tools beside the look-back tools, and each step's compile read back. */
export async function agent(languageModel: Exclude<LanguageModel, string>, session: Session, store: FsArtifactStore): Promise<number> {
  const artifactStore = new MemoryArtifactStore();
  const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity }), new ArtifactAttacher(artifactStore)] });
  const schema: JSONSchema7 = { type: "object", properties: { path: { type: "string" } }, required: ["path"] };
  const myTools = {
    read_logs: tool({ description: "Reads a log", inputSchema: jsonSchema(schema), execute: async () => "02:41 ERROR disk full" }),
  };
  const model = wrapLanguageModel({
    model: languageModel,
    middleware: contextMiddleware({ session, compiler, budget: 32_000, store, tracer: trace.getTracer("my-agent"), reserveOutput: 1_000 }),
  });
  const lookBack: LookBackToolSet = lookBackTools({ session, artifactStore });
  const everything: ToolSet = { ...myTools, ...lookBack, ...aiSdkTools(specs) };
  const result = await generateText({
    model,
    messages: [{ role: "user", content: "Why did the nightly job fail?" }],
    tools: { ...myTools, ...lookBackTools({ session, artifactStore }) },
    stopWhen: isStepCount(10),
    onStepFinish: (step) => {
      const m: CompileMetadata | undefined = compileMetadata(step);
      void m?.cache.prefixTokens;
    },
  });
  const metadata: CompileMetadata | undefined = compileMetadata(result);
  const ledger: Ledger | undefined = metadata?.ledger;
  const step: StepResult<ToolSet> | undefined = result.steps.at(-1);
  const perStep = result.steps.map((s) => compileMetadata(s)?.ledger.included.length ?? 0);
  const stepMetadata = compileMetadata(step);
  void [everything, ledger?.excluded, stepMetadata?.ledger.included[0]?.zone];

  // A thread per id: a resolver may give nothing, then the store's session is used.
  const sessions = new Map<string, Session>();
  contextMiddleware({ session: (id) => sessions.get(id), compiler, budget: 8_000, store });
  contextMiddleware({ session: async (id) => sessions.get(id) ?? null, compiler, budget: 8_000, store: new MemoryArtifactStore() });

  // A stream's providerMetadata is a promise: read it from a step, or awaited.
  const stream = streamText({ model, prompt: "hi", tools: lookBackTools({ session }) });
  const fromStream = compileMetadata({ providerMetadata: await stream.providerMetadata }) ?? compileMetadata((await stream.steps).at(-1));
  // @ts-expect-error the stream result itself holds no metadata yet
  compileMetadata(stream);
  // @ts-expect-error a misspelt option of lookBackTools is a type error
  lookBackTools({ session, artifactstore: artifactStore });
  // @ts-expect-error lookBackTools takes the session
  lookBackTools({ artifactStore });
  // @ts-expect-error the AI SDK middleware takes no look-back options: spread lookBackTools instead
  contextMiddleware({ session, compiler, budget: 1, lookBackTools: true });
  // @ts-expect-error a tracer starts spans
  contextMiddleware({ session, compiler, budget: 1, tracer: { name: "t" } });
  // @ts-expect-error userPreferences is an object, as a compile takes it
  contextMiddleware({ session, compiler, budget: 1, userPreferences: ["terse"] });
  // @ts-expect-error a store saves and loads sessions
  contextMiddleware({ session, compiler, budget: 1, store: {} });
  return perStep.length + (fromStream?.ledger.included.length ?? 0) + (ledger?.included.length ?? 0);
}

import type { ModelMessage } from "ai";
import { recordApprovals, type ApprovalEvent } from "agent-context-compiler/ai-sdk";

/** A pause for approvals recorded from the SDK's messages, in this package's Session. */
export function approvals(session: Session, messages: ModelMessage[]): number {
  const events: ApprovalEvent[] = recordApprovals(session, messages);
  // @ts-expect-error the messages, not a result
  recordApprovals(session, { messages });
  return events.length + session.pendingApprovals().length;
}
