// Run by langchain_middleware.test.mjs: `node langchain_turn.mjs <dir> <pgUrl> <schema> <threadId> <turn>`
// continues a createAgent thread in a process of its own: the thread's
// messages from LangGraph's PostgresSaver, its session from an
// FsArtifactStore at <dir>; prints what the model got as JSON.
import pg from "pg";
import { createAgent } from "langchain";
import { HumanMessage } from "@langchain/core/messages";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { contextMiddleware } from "agent-context-compiler/langchain";
import { ContextCompiler, Compactor, FsArtifactStore, HistoryRecall, HistorySelector } from "agent-context-compiler";
import { ScriptedChatModel, readLog } from "../langchain_loop.mjs";

const [dir, url, schema, threadId, turn] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: url, max: 2 });
const store = new FsArtifactStore({ baseDir: dir });
const sessions = new Map();
const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity }), new Compactor(), new HistoryRecall()] });
const calls = [];
const agent = createAgent({
  model: new ScriptedChatModel(calls), tools: [readLog], systemPrompt: "You are an SRE.",
  checkpointer: new PostgresSaver(pool, undefined, { schema }),
  middleware: [contextMiddleware({ session: async (id) => sessions.get(id) ?? sessions.set(id, await store.loadSession(id)).get(id), compiler, budget: 3000, store })],
});
const result = await agent.invoke({ messages: [new HumanMessage(`Turn ${turn}: what did the nightly job log?`)] }, { configurable: { thread_id: threadId } });
process.stdout.write(JSON.stringify({ kinds: sessions.get(threadId).eventLog.events.map((e) => e.kind), text: result.messages.at(-1).content, calls: calls.map((c) => c.map((m) => [m.getType(), m.content])), events: sessions.get(threadId).eventLog.length }));
await pool.end();
