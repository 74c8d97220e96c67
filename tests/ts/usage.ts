// Each provider SDK's own usage object, as its types declare it, is a
// `ProviderUsage` under `--strict`: no cast, no copy.
import { Session } from "agent-context-compiler";
import type OpenAI from "openai";
import type Anthropic from "@anthropic-ai/sdk";
import type { GenerateContentResponseUsageMetadata } from "@google/genai";
import type { LanguageModelUsage } from "ai";
import type { LanguageModelV4Usage } from "@ai-sdk/provider";
import type { AIMessage, UsageMetadata } from "@langchain/core/messages";

export function recordEach(
  session: Session,
  chat: OpenAI.Chat.Completions.ChatCompletion,
  responses: OpenAI.Responses.Response,
  message: Anthropic.Messages.Message,
  gemini: GenerateContentResponseUsageMetadata,
  aiSdk: LanguageModelUsage,
  provider: LanguageModelV4Usage,
  langchain: UsageMetadata,
  reply: AIMessage,
): number {
  let recorded = 0;
  if (chat.usage) recorded += session.recordUsage(chat.usage).data === null ? 0 : 1;
  if (responses.usage) recorded += session.recordUsage(responses.usage) ? 1 : 0;
  recorded += session.recordUsage(message.usage) ? 1 : 0;
  recorded += session.recordUsage(gemini) ? 1 : 0;
  recorded += session.recordUsage(aiSdk, { countedTokens: 10 }) ? 1 : 0;
  recorded += session.recordUsage(provider) ? 1 : 0;
  recorded += session.recordUsage(langchain) ? 1 : 0;
  if (reply.usage_metadata) recorded += session.recordUsage(reply.usage_metadata) ? 1 : 0;
  // @ts-expect-error a string is no usage
  session.recordUsage("many");
  // @ts-expect-error nor an object with no count a provider reports
  session.recordUsage({ tokens: 5 });
  return recorded;
}
