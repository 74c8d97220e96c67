// The scripted AI SDK model and tools the contextMiddleware tests share: the
// model asks for the turn's `read_log` and answers once the prompt holds its
// result; it keeps every prompt.
import { jsonSchema, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";

const usage = (input) => ({ inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } });
const finish = (unified) => ({ unified, raw: unified });

/** The log of turn `turn`: 60 lines, turn 1's naming volume vol-7781 and a secret. */
export function nightlyLog(turn) {
  const lines = Array.from({ length: 60 }, (_, i) => `02:${String(i).padStart(2, "0")} job step ${i} ok rows=${turn * 100 + i}`);
  if (turn === 1) {
    lines[41] = "02:41 job step 41 ERROR volume vol-7781 over quota";
    lines[42] = "02:42 env AWS_SECRET_ACCESS_KEY=Zq8vN2mLk4Rt7Wx1Yb3Hc6Jd9Fg0Ps5Ue2Ai7Ko";
  }
  return lines.join("\n");
}

/** The app's tools, run by the SDK itself. */
export const tools = {
  read_log: tool({
    description: "Reads the nightly job's log of a turn",
    inputSchema: jsonSchema({ type: "object", properties: { turn: { type: "integer" } }, required: ["turn"] }),
    execute: async ({ turn }) => nightlyLog(turn),
  }),
};

/** The turn number a prompt's newest user message names. */
const turnOf = (prompt) => {
  const user = prompt.findLast((m) => m.role === "user" && m.content.some((p) => /^Turn \d+:/.test(p.text ?? "")));
  return Number(/^Turn (\d+):/.exec(user.content.find((p) => /^Turn \d+:/.test(p.text ?? "")).text)[1]);
};

/** A model asking for the turn's log, then answering; `prompts` holds what it got. */
export function scriptedModel() {
  const prompts = [];
  const respond = (prompt) => {
    prompts.push(prompt);
    const turn = turnOf(prompt);
    const answered = prompt.some((m) => m.role === "tool" && m.content.some((p) => p.toolCallId === `call_${turn}`));
    // The provider's count of the prompt: a token per four characters of it.
    const input = Math.ceil(JSON.stringify(prompt).length / 4);
    return answered
      ? { content: [{ type: "text", text: `Turn ${turn}: the job ran.` }], finishReason: finish("stop"), usage: usage(input), warnings: [] }
      : { content: [{ type: "tool-call", toolCallId: `call_${turn}`, toolName: "read_log", input: JSON.stringify({ turn }) }], finishReason: finish("tool-calls"), usage: usage(input), warnings: [] };
  };
  const model = new MockLanguageModelV4({
    doGenerate: async ({ prompt }) => respond(prompt),
    doStream: async ({ prompt }) => {
      const reply = respond(prompt);
      const parts = [{ type: "stream-start", warnings: [] }];
      for (const c of reply.content) {
        if (c.type === "text") parts.push({ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: c.text.slice(0, 5) }, { type: "text-delta", id: "t", delta: c.text.slice(5) }, { type: "text-end", id: "t" });
        else parts.push(c);
      }
      parts.push({ type: "finish", finishReason: reply.finishReason, usage: reply.usage });
      return { stream: new ReadableStream({ start(c) { for (const p of parts) c.enqueue(p); c.close(); } }) };
    },
  });
  return { model, prompts };
}
