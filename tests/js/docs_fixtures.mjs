// What the documentation's examples are given (tests/js/docs_examples.test.mjs):
// each JavaScript block names the fixtures it uses in the comment above it
// (`<!-- run: session, openai -->`), and `make(names)` builds them. Providers
// are their real SDKs over a scripted fetch; models are the frameworks' own
// test models or scripted ones; stores are real (a Map-backed KV, the test
// PostgreSQL and Redis servers).
import { readFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { MockLanguageModelV4 } from "ai/test";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { Agent, Usage, setTracingDisabled } from "@openai/agents";
import * as lib from "agent-context-compiler";

const PNG = readFileSync(new URL("../fixtures/media/chart.png", import.meta.url));
const ANSWER = "The nightly job failed: the disk is full.";

/** A fetch answering the OpenAI API: a chat completion (streamed when asked) or a Responses response. */
async function openAiFetch(url, init) {
  const body = JSON.parse(init.body);
  const usage = { prompt_tokens: 120, completion_tokens: 9, total_tokens: 129 };
  if (String(url).endsWith("/responses")) {
    return Response.json({ id: "resp_1", object: "response", status: "completed", model: body.model, output: [{ type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{ type: "output_text", text: ANSWER, annotations: [] }] }], usage: { input_tokens: 120, output_tokens: 9, total_tokens: 129 } });
  }
  if (!body.stream) {
    return Response.json({ id: "chatcmpl-1", object: "chat.completion", created: 0, model: body.model, choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: ANSWER } }], usage });
  }
  const chunk = (delta, extra = {}) => `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 0, model: body.model, choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;
  const text = chunk({ role: "assistant", content: ANSWER.slice(0, 10) }) + chunk({ content: ANSWER.slice(10) }) + `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 0, model: body.model, choices: [], usage })}\n\n` + "data: [DONE]\n\n";
  return new Response(text, { headers: { "content-type": "text/event-stream" } });
}

/** A LangChain chat model that answers every call. */
class AnsweringChatModel extends BaseChatModel {
  constructor() {
    super({});
  }
  _llmType() {
    return "answering";
  }
  bindTools() {
    return this;
  }
  async _generate() {
    const message = new AIMessage({ content: ANSWER, usage_metadata: { input_tokens: 100, output_tokens: 9, total_tokens: 109 } });
    return { generations: [{ text: ANSWER, message }] };
  }
}

/** A LangChain chat model that asks to delete build/a.log, then answers. */
class AskingChatModel extends AnsweringChatModel {
  async _generate(messages) {
    if (messages.some((m) => m.getType() === "tool")) return super._generate();
    const message = new AIMessage({ content: "", tool_calls: [{ id: "call_1", name: "delete_file", args: { path: "build/a.log" }, type: "tool_call" }], usage_metadata: { input_tokens: 100, output_tokens: 9, total_tokens: 109 } });
    return { generations: [{ text: "", message }] };
  }
}

/** An MCP client connected to a server with a `read_logs` tool declaring its output schema. */
async function mcpClient() {
  const server = new Server({ name: "logs", version: "1.0.0" }, { capabilities: { tools: {} } });
  const outputSchema = { type: "object", properties: { lines: { type: "array", items: { type: "string" } } }, required: ["lines"] };
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: "read_logs", description: "Reads a log", inputSchema: { type: "object", properties: { path: { type: "string" } } }, outputSchema }] }));
  server.setRequestHandler(CallToolRequestSchema, async () => {
    const structuredContent = { lines: ["02:41 ERROR disk full", "02:42 job failed"] };
    return { content: [{ type: "text", text: JSON.stringify(structuredContent) }], structuredContent };
  });
  const client = new Client({ name: "docs", version: "1.0.0" });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([client.connect(a), server.connect(b)]);
  return client;
}

/** A Map-backed KV as `KvArtifactStore` takes it. */
function mapKv() {
  const map = new Map();
  const same = (a, b) => (a == null || b == null ? a == b : a.length === b.length && a.every((x, i) => x === b[i]));
  return {
    get: async (k) => map.get(k) ?? null,
    put: async (k, v) => void map.set(k, v),
    delete: async (k) => void map.delete(k),
    list: async ({ prefix }) => [...map.keys()].filter((k) => k.startsWith(prefix)),
    putIf: async (k, v, expected) => same(map.get(k), expected) && (map.set(k, v), true),
  };
}

const TOOL = { name: "read_logs", description: "Reads a log", parameters: { type: "object", properties: { path: { type: "string" } } } };

/** Each fixture by name; `made` holds those built so far (a fixture may use another). */
const FIXTURES = {
  session: () => new lib.Session(),
  mine: () => new lib.Session(),
  sessions: () => {
    const map = new Map();
    return { get: (id) => map.get(id) ?? map.set(id, new lib.Session({ sessionId: id })).get(id) };
  },
  store: () => new lib.KvArtifactStore(mapKv()),
  kv: () => mapKv(),
  compiler: () => new lib.ContextCompiler({ layout: "zoned", processors: [new lib.HistorySelector({ keepFirst: 1, keepLast: Infinity }), new lib.Compactor(), new lib.HistoryRecall()] }),
  processors: () => [new lib.HistorySelector({ keepFirst: 1, keepLast: Infinity }), new lib.Compactor()],
  llm: () => async () => "[]",
  tools: () => [TOOL],
  specs: () => [TOOL],
  openAiTools: () => [{ type: "function", function: { name: TOOL.name, description: TOOL.description, parameters: TOOL.parameters } }],
  myTools: () => ({ read_logs: async () => "02:41 ERROR disk full" }),
  bridge: () => async (name) => `${name}: 02:41 ERROR disk full`,
  toolHandler: (made) => new lib.ToolInterruptHandler({ session: made.session, bridge: async () => "/data 92% used" }),
  hugeLogText: () => Array.from({ length: 5000 }, (_, i) => `02:${String(i % 60).padStart(2, "0")} step ${i} ok`).join("\n"),
  model: () => "gpt-4.1",
  openai: () => new OpenAI({ apiKey: "sk-docs", fetch: openAiFetch, maxRetries: 0 }),
  languageModel: () => new MockLanguageModelV4({
    doGenerate: async () => ({ content: [{ type: "text", text: ANSWER }], finishReason: { unified: "stop", raw: "stop" }, usage: { inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 9, text: 9, reasoning: 0 } }, warnings: [] }),
  }),
  chatModel: () => new AnsweringChatModel(),
  // Models that ask to delete build/a.log (a tool that waits for approval), then answer.
  askingLanguageModel: () => new MockLanguageModelV4({
    doGenerate: async ({ prompt }) => {
      const answered = prompt.some((m) => m.role === "tool");
      const content = answered ? [{ type: "text", text: ANSWER }] : [{ type: "tool-call", toolCallId: "call_1", toolName: "delete_file", input: JSON.stringify({ path: "build/a.log" }) }];
      return { content, finishReason: { unified: answered ? "stop" : "tool-calls", raw: "stop" }, usage: { inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 9, text: 9, reasoning: 0 } }, warnings: [] };
    },
  }),
  askingChatModel: () => new AskingChatModel(),
  askingAgentModel: () => ({
    async getResponse(request) {
      const usage = new Usage({ requests: 1, inputTokens: 100, outputTokens: 9, totalTokens: 109 });
      if (request.input.some((i) => i.type === "function_call_result")) return { usage, output: [{ type: "message", id: "msg_2", role: "assistant", status: "completed", content: [{ type: "output_text", text: ANSWER }] }] };
      return { usage, output: [{ type: "function_call", id: "fc_1", callId: "call_1", name: "delete_file", arguments: JSON.stringify({ path: "build/a.log" }), status: "completed" }] };
    },
    async *getStreamedResponse() {
      throw new Error("not streamed");
    },
  }),
  checkpointer: () => new MemorySaver(),
  agent: () => {
    setTracingDisabled(true);
    const model = {
      async getResponse() {
        return { usage: new Usage({ requests: 1, inputTokens: 100, outputTokens: 9, totalTokens: 109 }), output: [{ type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{ type: "output_text", text: ANSWER }] }] };
      },
      async *getStreamedResponse() {
        throw new Error("not streamed");
      },
    };
    return new Agent({ name: "sre", instructions: "You are an SRE.", model });
  },
  mcp: () => mcpClient(),
  bus: () => {
    const bus = new lib.EventBus();
    bus.start();
    return bus;
  },
  abortController: () => new AbortController(),
  stopButton: () => ({ signal: new AbortController().signal }),
  out: () => ({ textContent: "" }),
  readFile: () => async () => PNG,
  pngBytes: () => PNG,
  indexedDB: async () => {
    await import("fake-indexeddb/auto");
    return globalThis.indexedDB;
  },
  servers: () => {
    process.env.DATABASE_URL = process.env.ACC_PG_URL;
    process.env.REDIS_URL = process.env.ACC_REDIS_URL;
    if (!process.env.DATABASE_URL || !process.env.REDIS_URL) throw new Error("the servers fixture needs ACC_PG_URL and ACC_REDIS_URL (run through npm test)");
    return true;
  },
};

/** The fixtures `names` (in that order), in a fresh working directory. */
export async function make(names) {
  process.chdir(mkdtempSync(join(tmpdir(), "acc-docs-")));
  const made = {};
  for (const name of names) {
    if (!FIXTURES[name]) throw new Error(`no docs fixture named ${name} (known: ${Object.keys(FIXTURES).join(", ")})`);
    made[name] = await FIXTURES[name](made);
  }
  return made;
}

/** The fixtures there are. */
export const FIXTURE_NAMES = Object.keys(FIXTURES);
