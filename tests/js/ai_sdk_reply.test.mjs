// runCompiled takes the AI SDK's own results as its model's reply (issue
// 49): a generateText result, whose fields are getters on its prototype, is
// read from its last step; a streamText result is read from its fullStream;
// a result whose tools the SDK ran itself is MODEL_FAILED saying what to do.
import { test } from "node:test";
import assert from "node:assert/strict";
import { generateText, jsonSchema, streamText, tool } from "ai";
import { aiSdkTools } from "agent-context-compiler/ai-sdk";
import { MockLanguageModelV4, convertArrayToReadableStream } from "ai/test";
import { ToolInterruptHandler, PerceptionAligner, SchemaRegistry, Session, runCompiled, checkRequest } from "agent-context-compiler";
import { rejectsWithCode } from "./helpers.mjs";

const usage = (input) => ({ inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } });
const finish = (unified) => ({ unified, raw: unified });

/** A model that asks for `df` once, then answers. */
function scripted() {
  let calls = 0;
  return new MockLanguageModelV4({
    doGenerate: async () =>
      calls++ === 0
        ? { content: [{ type: "tool-call", toolCallId: "call_1", toolName: "df", input: JSON.stringify({ path: "/data" }) }], finishReason: finish("tool-calls"), usage: usage(120), warnings: [] }
        : { content: [{ type: "text", text: "The disk is 92% full." }], finishReason: finish("stop"), usage: usage(180), warnings: [] },
  });
}

const DF = { name: "df", description: "Disk usage of a path", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } };

function handler(session) {
  return new ToolInterruptHandler({ bridge: async () => "/data 92% used", normalizer: new PerceptionAligner(new SchemaRegistry()), session });
}

test("a generateText result is a reply: its last step's text, calls and usage", async () => {
  const session = new Session();
  const model = scripted();
  const requests = [];
  const result = await runCompiled("How full is /data?", {
    session,
    budget: 4000,
    format: "ai-sdk",
    tools: [DF],
    toolHandler: handler(session),
    model: (request, { tools, signal }) => {
      requests.push(request);
      return generateText({ model, ...request, tools: aiSdkTools(tools), abortSignal: signal });
    },
  });
  assert.equal(result.result, "The disk is 92% full.");
  assert.deepEqual(session.eventLog.events.map((e) => e.kind), ["user_input", "model_usage", "tool_call", "tool_success", "model_usage", "assistant_output"]);
  assert.equal(session.eventLog.events[1].data.inputTokens, 120);
  for (const r of requests) assert.deepEqual(checkRequest(r, { format: "ai-sdk" }), []);
  session.free();
});

test("a streamText result is read from its fullStream", async () => {
  const session = new Session();
  const model = new MockLanguageModelV4({
    doStream: async () => ({
      stream: convertArrayToReadableStream([
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: "All " },
        { type: "text-delta", id: "t", delta: "clear." },
        { type: "text-end", id: "t" },
        { type: "finish", finishReason: finish("stop"), usage: usage(90) },
      ]),
    }),
  });
  const deltas = [];
  const result = await runCompiled("Status?", {
    session,
    budget: 4000,
    format: "ai-sdk",
    onDelta: (d) => deltas.push(d),
    model: (request, { signal }) => streamText({ model, ...request, abortSignal: signal }),
  });
  assert.equal(result.result, "All clear.");
  assert.deepEqual(deltas.map((d) => d.text), ["All ", "clear."]);
  session.free();
});

test("a result whose tools the SDK ran itself is refused, saying to pass no execute", async () => {
  const session = new Session();
  const model = scripted();
  const e = await rejectsWithCode(
    () =>
      runCompiled("How full is /data?", {
        session,
        budget: 4000,
        format: "ai-sdk",
        model: (request) =>
          generateText({ model, ...request, tools: { df: tool({ inputSchema: jsonSchema(DF.parameters), execute: async () => "92%" }) } }),
      }),
    "MODEL_FAILED",
  );
  assert.match(e.message, /without execute/);
  session.free();
});

test("aiSdkTools: the run's tool specs as a ToolSet without execute; bad specs are INVALID_ARGUMENT", () => {
  const set = aiSdkTools([DF, { name: "ls", parameters: { type: "object" } }]);
  assert.deepEqual(Object.keys(set), ["df", "ls"]);
  assert.equal(set.df.description, DF.description);
  assert.equal(set.df.execute, undefined, "the SDK returns the calls; the run runs them");
  assert.deepEqual(set.df.inputSchema.jsonSchema, DF.parameters);
  for (const bad of [undefined, {}, [null], [{ parameters: {} }], [{ name: "a" }], [{ name: "a", parameters: [] }], [DF, DF], [{ name: "a", parameters: {}, description: 3 }]]) {
    assert.throws(() => aiSdkTools(bad), { code: "INVALID_ARGUMENT" }, JSON.stringify(bad));
  }
});
