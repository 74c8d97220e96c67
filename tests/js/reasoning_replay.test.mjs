// Reasoning replay (issue 36, item 1): what a provider asks back in a tool
// loop is kept from its reply (whole, or streamed through its own SDK's
// Stream), recorded with the turn, and sent back in its own format while the
// turn lasts: Anthropic's signed thinking blocks first in the assistant
// message, Responses' reasoning items before the turn's calls, Gemini's
// thought signature on its call. Another format never gets them; the next
// turn does not either.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Stream as AnthropicStream } from "@anthropic-ai/sdk/streaming";
import { Session, checkRequest, runCompiled } from "agent-context-compiler";

const sse = (events) => new Response(events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(""));

const tools = [{ name: "df", description: "disk usage", parameters: { type: "object", properties: {} } }];

/** Runs one turn whose first reply is `first`, keeping each request. */
async function turn(session, question, format, first) {
  const requests = [];
  await runCompiled(question, {
    session, budget: 8000, systemPrompt: "You are an SRE.", format, tools,
    bridge: () => "/data 100% used",
    model: async (request, { step }) => {
      requests.push(structuredClone(request));
      return step === 0 ? first() : "The disk is full.";
    },
  });
  for (const request of requests) assert.deepEqual(checkRequest(request, { format }), [], format);
  return requests;
}

const thinking = { type: "thinking", thinking: "Check the disk first.", signature: "EqQBCkgIARABGAIiQL" };

test("Anthropic thinking from a message goes back first in its assistant message, this turn only", async () => {
  const session = new Session();
  const message = { id: "msg_1", type: "message", role: "assistant", model: "claude", content: [thinking, { type: "tool_use", id: "toolu_1", name: "df", input: {} }], stop_reason: "tool_use", usage: { input_tokens: 10, output_tokens: 5 } };
  const [, second] = await turn(session, "Why did the job fail?", "anthropic", () => message);
  const assistant = second.messages.find((m) => m.role === "assistant");
  assert.deepEqual(assistant.content[0], thinking);
  assert.equal(assistant.content[1].type, "tool_use");
  const [next] = await turn(session, "And now?", "anthropic", () => "Still full.");
  assert.ok(!JSON.stringify(next).includes(thinking.signature), "the last turn's thinking is not sent again");
});

test("Anthropic thinking read from the SDK's stream (thinking and signature deltas) goes back whole", async () => {
  const events = [
    { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude", content: [], stop_reason: null, usage: { input_tokens: 40, output_tokens: 1 } } },
    { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Check the " } },
    { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "disk first." } },
    { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: thinking.signature } },
    { type: "content_block_stop", index: 0 },
    { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_1", name: "df", input: {} } },
    { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "{}" } },
    { type: "content_block_stop", index: 1 },
    { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 20 } },
    { type: "message_stop" },
  ];
  const [, second] = await turn(new Session(), "Why did the job fail?", "anthropic", () => AnthropicStream.fromSSEResponse(sse(events), new AbortController()));
  const assistant = second.messages.find((m) => m.role === "assistant");
  assert.deepEqual(assistant.content[0], thinking);
});

test("Responses reasoning items go back before the turn's calls, and never in another format", async () => {
  const item = { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAAAABo" };
  const response = { id: "resp_1", object: "response", output: [item, { type: "function_call", id: "fc_1", call_id: "call_1", name: "df", arguments: "{}", status: "completed" }] };
  const [, second] = await turn(new Session(), "Why did the job fail?", "openai-responses", () => response);
  const at = second.input.findIndex((i) => i.type === "reasoning");
  assert.deepEqual(second.input[at], item);
  assert.equal(second.input[at + 1].type, "function_call");
  const [, other] = await turn(new Session(), "Why did the job fail?", "openai", () => response);
  assert.ok(!JSON.stringify(other).includes("gAAAAABo"));
});

test("Gemini thought signatures go back on their calls", async () => {
  const signature = "CiQBcsjafF".repeat(40);
  const response = { candidates: [{ content: { role: "model", parts: [{ functionCall: { name: "df", args: {} }, thoughtSignature: signature }] } }] };
  const session = new Session();
  const [, second] = await turn(session, "Why did the job fail?", "gemini", () => response);
  const model = second.contents.find((c) => c.role === "model");
  assert.equal(model.parts[0].thoughtSignature, signature);
  const call = session.eventLog.events.find((e) => e.kind === "tool_call");
  assert.equal(call.data.thought_signature, signature);
});
