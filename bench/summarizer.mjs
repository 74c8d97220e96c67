// The scripted summariser LangChain's summarizationMiddleware runs with in
// the benchmarks (./langchain_middleware.mjs, ./integrations.mjs): it keeps
// every line it is shown that the benchmark's evidence lives in.
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage } from "@langchain/core/messages";

/** A message's text: a string, or its text blocks. */
export const text = (m) => (typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? "").join(""));

/** A summariser model keeping every line it is shown that `keep` (a RegExp) matches, once each. */
export class ScriptedSummarizer extends BaseChatModel {
  constructor(keep) {
    super({});
    this.keep = keep;
  }
  _llmType() {
    return "scripted-summarizer";
  }
  async _generate(messages) {
    const shown = messages.map(text).join("\n");
    const kept = shown.split("\n").filter((l) => this.keep.test(l)).map((l) => l.trim());
    const message = new AIMessage(`Summary of the conversation so far:\n${[...new Set(kept)].join("\n")}`);
    return { generations: [{ text: text(message), message }] };
  }
}
