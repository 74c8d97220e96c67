// The scripted Agents SDK model and agent the agentsSession tests share: the
// model asks for the turn's `read_log` and answers once its input holds the
// result, checking every input item against the SDK's own schema; it keeps
// every input it got.
import { Agent, Usage, tool } from "@openai/agents";
import { protocol } from "@openai/agents-core";
import { nightlyLog } from "./ai_sdk_loop.mjs";

/** The turn number the input's newest "Turn N:" user message names. */
function turnOf(input) {
  const text = (i) => (typeof i.content === "string" ? i.content : (i.content ?? []).map((p) => p.text ?? "").join(""));
  const user = input.findLast((i) => i.role === "user" && /^Turn \d+:/.test(text(i)));
  return Number(/^Turn (\d+):/.exec(text(user))[1]);
}

/** An agent over a scripted model; `inputs` holds each model input, `instructions` each system text. */
export function scriptedAgent() {
  const inputs = [];
  const instructions = [];
  const model = {
    async getResponse(request) {
      for (const item of request.input) protocol.ModelItem.parse(item);
      inputs.push(request.input);
      instructions.push(request.systemInstructions);
      const turn = turnOf(request.input);
      const input = Math.ceil(JSON.stringify(request).length / 4);
      const usage = new Usage({ requests: 1, inputTokens: input, outputTokens: 5, totalTokens: input + 5, inputTokensDetails: { cached_tokens: 0 } });
      const answered = request.input.some((i) => i.type === "function_call_result" && i.callId === `call_${turn}`);
      return answered
        ? { usage, output: [{ type: "message", id: `msg_${turn}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: `Turn ${turn}: the job ran.` }] }] }
        : { usage, output: [{ type: "function_call", id: `fc_${turn}`, callId: `call_${turn}`, name: "read_log", arguments: JSON.stringify({ turn }), status: "completed" }] };
    },
    async *getStreamedResponse() {
      throw new Error("this scripted model does not stream");
    },
  };
  const readLog = tool({
    name: "read_log",
    description: "Reads the nightly job's log of a turn",
    parameters: { type: "object", properties: { turn: { type: "integer" } }, required: ["turn"], additionalProperties: false },
    strict: true,
    execute: async ({ turn }) => nightlyLog(turn),
  });
  const agent = new Agent({ name: "sre", instructions: "You are an SRE.", model, tools: [readLog] });
  return { agent, inputs, instructions };
}
