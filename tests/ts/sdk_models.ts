// Each provider SDK's own call as runCompiled's model, under --strict with no
// cast: the messages, tools and tool choice a run hands over in a format are
// what that SDK's call takes, and its response is a reply the run reads.
import { runCompiled, type RunResult } from "agent-context-compiler";
import type OpenAI from "openai";
import type Anthropic from "@anthropic-ai/sdk";
import { FunctionCallingConfigMode, type GoogleGenAI } from "@google/genai";
import { generateText, streamText, type LanguageModel } from "ai";
import { aiSdkTools } from "agent-context-compiler/ai-sdk";

export async function openaiChat(openai: OpenAI): Promise<RunResult> {
  return runCompiled("How full is /data?", {
    budget: 32_000,
    model: (messages, { tools, toolChoice, signal }) =>
      openai.chat.completions.create({ model: "gpt-4.1", messages, tools, tool_choice: toolChoice }, { signal }),
  });
}

export async function openaiResponses(openai: OpenAI): Promise<RunResult> {
  return runCompiled("How full is /data?", {
    budget: 32_000,
    format: "openai-responses",
    model: (request, { tools, toolChoice, signal }) =>
      openai.responses.create({ model: "gpt-4.1", ...request, tools, tool_choice: toolChoice }, { signal }),
  });
}

export async function anthropic(client: Anthropic): Promise<RunResult> {
  return runCompiled("How full is /data?", {
    budget: 32_000,
    format: "anthropic",
    model: (request, { tools, toolChoice, signal }) =>
      client.messages.create({ model: "claude-sonnet-4-5", max_tokens: 1024, ...request, tools, tool_choice: toolChoice }, { signal }),
  });
}

export async function gemini(ai: GoogleGenAI): Promise<RunResult> {
  return runCompiled("How full is /data?", {
    budget: 32_000,
    format: "gemini",
    model: ({ systemInstruction, contents }, { tools, toolChoice, signal }) =>
      ai.models.generateContent({
        model: "gemini-2.5-flash",
        contents,
        config: {
          systemInstruction,
          tools: [{ functionDeclarations: tools }],
          // Gemini's mode is an enum of its own: the run names its member.
          toolConfig: toolChoice && { functionCallingConfig: { ...toolChoice.functionCallingConfig, mode: FunctionCallingConfigMode[toolChoice.functionCallingConfig.mode] } },
          abortSignal: signal,
        },
      }),
  });
}

export async function aiSdk(model: LanguageModel): Promise<RunResult[]> {
  const whole = await runCompiled("How full is /data?", {
    budget: 32_000,
    format: "ai-sdk",
    model: (request, { tools, toolChoice, signal }) => generateText({ model, ...request, tools: aiSdkTools(tools), toolChoice, abortSignal: signal }),
  });
  const streamed = await runCompiled("How full is /data?", {
    budget: 32_000,
    format: "ai-sdk",
    model: (request, { tools, signal }) => streamText({ model, ...request, tools: aiSdkTools(tools), abortSignal: signal }),
  });
  return [whole, streamed];
}
