// The scripted LangChain chat model and tool the contextMiddleware tests
// share: the model asks for the turn's `read_log` and answers once its
// messages hold the result; it keeps the messages and system text of every call.
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { nightlyLog } from "./ai_sdk_loop.mjs";

const text = (m) => (typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? "").join(""));

/** A chat model following the script; `calls` holds each call's messages. */
export class ScriptedChatModel extends BaseChatModel {
  constructor(calls = []) {
    super({});
    this.calls = calls;
  }
  _llmType() {
    return "scripted";
  }
  bindTools() {
    return this;
  }
  async _generate(messages) {
    this.calls.push(messages);
    const question = messages.findLast((m) => m.getType() === "human" && /^Turn \d+:/.test(text(m)));
    const turn = Number(/^Turn (\d+):/.exec(text(question))[1]);
    const answered = messages.some((m) => m.getType() === "tool" && m.tool_call_id === `call_${turn}`);
    // The provider's count: a token per four characters of the messages as sent.
    const input = Math.ceil(JSON.stringify(messages).length / 4);
    const usage_metadata = { input_tokens: input, output_tokens: 5, total_tokens: input + 5 };
    const message = answered
      ? new AIMessage({ content: `Turn ${turn}: the job ran.`, usage_metadata })
      : new AIMessage({ content: "", tool_calls: [{ id: `call_${turn}`, name: "read_log", args: { turn }, type: "tool_call" }], usage_metadata });
    return { generations: [{ text: text(message), message }] };
  }
}

/** The app's tool, run by LangChain itself. */
export const readLog = tool(async ({ turn }) => nightlyLog(turn), {
  name: "read_log",
  description: "Reads the nightly job's log of a turn",
  schema: { type: "object", properties: { turn: { type: "integer" } }, required: ["turn"] },
});
