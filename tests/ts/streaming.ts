// A model's streams, checked by `tsc --noEmit` against the provider SDKs'
// own stream types (the `ai` SDK's types need the DOM lib).
import type OpenAI from "openai";
import type { Stream } from "openai/streaming";
import type { MessageStreamEvent } from "@anthropic-ai/sdk/resources/messages";
import type { Stream as AnthropicStream } from "@anthropic-ai/sdk/streaming";
import { streamText, type LanguageModel } from "ai";
import { runCompiled, type StreamDelta } from "agent-context-compiler";

export async function streams(chat: Stream<OpenAI.Chat.Completions.ChatCompletionChunk>, claude: AnthropicStream<MessageStreamEvent>, model: LanguageModel): Promise<void> {
  const seen: StreamDelta[] = [];
  await runCompiled("hi", { budget: 100, model: () => chat, onDelta: (d) => void seen.push(d) });
  await runCompiled("hi", { budget: 100, format: "anthropic", model: async () => claude });
  await runCompiled("hi", { budget: 100, format: "ai-sdk", streamFormat: "ai-sdk", reserveOutput: 10, model: (m) => streamText({ model, ...m }).fullStream });
}
