// The zoned layout, ContextWindow and provider formats, type-checked: each
// provider form must be assignable to that provider's own published request
// types (the `openai`, `@anthropic-ai/sdk` and `@google/genai` SDKs, the `ai`
// package).
import { generateText, type LanguageModel, type ModelMessage, type SystemModelMessage } from "ai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import type { MessageCreateParamsNonStreaming } from "@anthropic-ai/sdk/resources/messages";
import type { ResponseCreateParamsNonStreaming } from "openai/resources/responses/responses";
import type { Content, GenerateContentParameters } from "@google/genai";
import {
  ArtifactAttacher, Compactor, ContextCompiler, ContextWindow, HistorySelector, MemoryArtifactStore, Session,
  COMPACT_EMERGENCY, COMPACT_FULL, COMPACT_LIGHT, DEFAULT_ZONE_BUDGETS,
  type AnthropicRequest, type GeminiRequest, type OpenAiResponsesRequest, type CompactionLevel, type CompiledContext, type ContextStats, type OpenAiMessage,
  type Message, type WorkingContext, type ZoneUsage, type MediaPart, attachMedia,
} from "agent-context-compiler";

export async function zoned(): Promise<number> {
  const session = new Session();
  const store = new MemoryArtifactStore();
  const compiler = new ContextCompiler({
    layout: "zoned",
    processors: [
      new HistorySelector({ keepFirst: 1, keepLast: Infinity }),
      new ArtifactAttacher(store, { thresholdBytes: 4096 }),
      new Compactor({ summarizer: async (prompt: string, { maxTokens }) => prompt.slice(0, maxTokens), target: 0.5 }),
    ],
  });
  const ctx: WorkingContext = await compiler.compile(session, 32_000, {
    systemPrompt: "s", goal: "g", policies: ["p"], toolDefinitions: [{ name: "t" }], userPreferences: { a: 1 },
    stateDigest: { b: 2 }, taskState: "t",
    tools: [{ name: "t", description: "d", parameters: { type: "object" } }], format: "anthropic", reserveOutput: 1000, usageMargin: 0.1,
  });
  const planned: number = (ctx.budgetPlan?.target ?? 0) + ctx.toolTokens + (ctx.budgetPlan?.correction ?? 1);
  void planned;
  const plain: Message[] = ctx.toMessages();
  const openai: OpenAiMessage[] = ctx.toMessages({ format: "openai" });
  const anthropic: AnthropicRequest = ctx.toMessages({ format: "anthropic" });
  const aiSdkRequest = ctx.toMessages({ format: "ai-sdk" });
  const aiSdk: ModelMessage[] = aiSdkRequest.messages;
  const instructions: SystemModelMessage[] = aiSdkRequest.instructions;
  // The README's call: the request spread into generateText.
  const send = (model: LanguageModel) => generateText({ model, ...ctx.toMessages({ format: "ai-sdk" }) });
  const openaiRequest: ChatCompletionMessageParam[] = ctx.toMessages({ format: "openai" });
  const anthropicRequest: Pick<MessageCreateParamsNonStreaming, "system" | "messages"> = ctx.toMessages({ format: "anthropic" });
  const responses: OpenAiResponsesRequest = ctx.toMessages({ format: "openai-responses" });
  const responsesRequest: ResponseCreateParamsNonStreaming = { model: "gpt-5", ...ctx.toMessages({ format: "openai-responses" }) };
  const gemini: GeminiRequest = ctx.toMessages({ format: "gemini" });
  const contents: Content[] = gemini.contents;
  const geminiRequest: GenerateContentParameters = { model: "gemini-2.5-flash", contents: gemini.contents, config: { systemInstruction: gemini.systemInstruction } };
  const usage: ZoneUsage = ctx.zoneUsage;
  const level: CompactionLevel = ctx.compactionLevel;
  const selected: WorkingContext = await new HistorySelector().process(session, { systemPrompt: "s", layout: "zoned" }, 1000);
  // @ts-expect-error the SDK's types are strict: a tool message needs its call's id
  const strict: ChatCompletionMessageParam[] = [{ role: "tool", content: "x" }];
  void strict;
  // @ts-expect-error unknown format
  ctx.toMessages({ format: "bard" });
  // @ts-expect-error unknown layout
  new ContextCompiler({ layout: "columns" });

  const w = new ContextWindow({ maxContextTokens: 128_000, zoneBudgets: { working: 0.3 } });
  w.setSystemPrompt("s");
  w.setUserPreferences({ language: "en" });
  w.setPolicies(["p"]);
  w.setToolDefinitions([{ name: "bash" }]);
  w.setGoal("g");
  w.setBrainDigest({ c: 0.5 });
  w.setTaskState("t");
  w.appendMessage("user", "hi", { importance: 0.9 });
  w.appendToolResult("bash", "ok", { success: false });
  w.addRecentMessage("user", "now");
  w.writeScratchpad("note");
  const compiled: CompiledContext = w.compile();
  const stats: ContextStats = w.getStats();
  const l: CompactionLevel = w.getCompactionLevel();
  w.compactWorkingMemory("sum");
  w.emergencyCompact("sum");
  // @ts-expect-error importance is a number
  w.appendMessage("user", "x", { importance: "high" });
  const thresholds: number = COMPACT_LIGHT + COMPACT_FULL + COMPACT_EMERGENCY + DEFAULT_ZONE_BUDGETS.working;
  void plain; void openai; void anthropic; void aiSdk; void instructions; void send; void openaiRequest; void anthropicRequest; void responses; void responsesRequest; void contents; void geminiRequest; void usage; void level; void selected; void stats; void l;
  return compiled.totalTokens + thresholds;
}

/** Images: attachMedia's part goes into an event; the compiler reads the bytes back. */
export async function images(png: Uint8Array): Promise<number> {
  const store = new MemoryArtifactStore();
  const part: MediaPart = await attachMedia(store, png, { detail: "high", filename: "chart.png" });
  const session = new Session();
  session.record("user_input", { text: "What is this?", media: [part] });
  const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector()], mediaStore: store });
  const ctx = await compiler.compile(session, 32_000, { model: "claude-sonnet-4-5", format: "anthropic" });
  const request: Pick<MessageCreateParamsNonStreaming, "system" | "messages"> = ctx.toMessages({ format: "anthropic" });
  // @ts-expect-error a part is an image or a file
  const wrong: MediaPart = { type: "video", mediaType: "image/png" };
  return request.messages.length + (ctx.history[0]?.media?.[0]?.tokens ?? 0) + (wrong ? 0 : 1);
}
