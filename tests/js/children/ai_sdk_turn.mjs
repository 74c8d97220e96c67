// Run by ai_sdk_middleware.test.mjs: `node ai_sdk_turn.mjs <dir> <sessionId> <turn>`
// continues a thread saved in an FsArtifactStore at <dir> in a process of
// its own: one generateText turn through contextMiddleware (the session
// loaded from the store by its id, synced back after every step), printing
// what the model was given as JSON.
import { generateText, isStepCount, wrapLanguageModel } from "ai";
import { contextMiddleware } from "agent-context-compiler/ai-sdk";
import { ContextCompiler, Compactor, FsArtifactStore, HistoryRecall, HistorySelector } from "agent-context-compiler";
import { scriptedModel, tools } from "../ai_sdk_loop.mjs";

const [dir, sessionId, turnText] = process.argv.slice(2);
const store = new FsArtifactStore({ baseDir: dir });
const sessions = new Map();
const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity }), new Compactor(), new HistoryRecall()] });
const { model, prompts } = scriptedModel();
const wrapped = wrapLanguageModel({
  model,
  middleware: contextMiddleware({
    session: async (id) => sessions.get(id) ?? sessions.set(id, await store.loadSession(id)).get(id),
    compiler, budget: 3000, store,
  }),
});
const turn = Number(turnText);
const result = await generateText({
  model: wrapped, tools, stopWhen: isStepCount(5),
  messages: [{ role: "user", content: `Turn ${turn}: what did the nightly job log?` }],
  providerOptions: { agentContextCompiler: { sessionId } },
});
process.stdout.write(JSON.stringify({ text: result.text, prompts, events: sessions.get(sessionId).eventLog.length }));
