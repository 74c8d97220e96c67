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
