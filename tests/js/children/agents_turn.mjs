// Run by openai_agents.test.mjs: `node agents_turn.mjs <dir> <sessionId> <turn>`
// continues a thread saved in an FsArtifactStore at <dir> in a process of
// its own: one Agents SDK run through agentsSession (the session loaded from
// the store, synced back after every write), printing what the model got.
import { run, setTracingDisabled } from "@openai/agents";
import { agentsSession } from "agent-context-compiler/openai-agents";
import { ContextCompiler, Compactor, FsArtifactStore, HistoryRecall, HistorySelector } from "agent-context-compiler";
import { scriptedAgent } from "../agents_loop.mjs";

setTracingDisabled(true);
const [dir, sessionId, turn] = process.argv.slice(2);
const store = new FsArtifactStore({ baseDir: dir });
const loaded = await store.loadSession(sessionId);
const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity }), new Compactor(), new HistoryRecall()] });
const { agent, inputs } = scriptedAgent();
const { session, callModelInputFilter } = agentsSession({ session: loaded, compiler, budget: 3000, store });
const result = await run(agent, `Turn ${turn}: what did the nightly job log?`, { session, callModelInputFilter });
process.stdout.write(JSON.stringify({ text: result.finalOutput, inputs, kinds: loaded.eventLog.events.map((e) => e.kind) }));
