// The peer, run in a worker so a call that does not finish can be stopped:
// LangChain's trimMessages over the same messages with the same token counter.
import { parentPort, workerData } from "node:worker_threads";
import { AIMessage, ChatMessage, HumanMessage, SystemMessage, trimMessages } from "@langchain/core/messages";
import { countTokens } from "agent-context-compiler";
import { generateTrace } from "./trace.mjs";

const { size, turns, budget, systemPrompt, overhead } = workerData;
const trace = generateTrace(size + turns, 42);

// The same counter as the library: countTokens + per-message overhead,
// cached per content string (a favourable setup for the peer).
const cache = new Map();
const count = (text) => {
  let n = cache.get(text);
  if (n === undefined) cache.set(text, (n = countTokens(text)));
  return n;
};
const tokenCounter = (msgs) => msgs.reduce((n, m) => n + count(m.content) + overhead, 0);

const toMessage = (e) =>
  e.role === "user" ? new HumanMessage(e.content) : e.role === "assistant" ? new AIMessage(e.content) : new ChatMessage({ role: "tool", content: e.content });

const messages = [new SystemMessage(systemPrompt), ...trace.slice(0, size).map(toMessage)];
for (let t = 0; t < turns; t++) {
  messages.push(toMessage(trace[size + t]));
  const start = performance.now();
  const kept = await trimMessages(messages, { maxTokens: budget, strategy: "last", includeSystem: true, tokenCounter });
  parentPort.postMessage({ ms: performance.now() - start, kept: kept.length - 1 });
}
parentPort.postMessage({ done: true });
