// Run by langchain_approvals.test.mjs: `node langchain_approval.mjs <dir> <pgUrl> <schema> <threadId> <decisions>`
// resumes a createAgent thread paused by humanInTheLoopMiddleware in a
// process of its own: the thread from LangGraph's PostgresSaver, its session
// from an FsArtifactStore at <dir>; resumes with <decisions> (JSON: the
// HITL decisions, in the order of the action requests), records the next
// pause if any, and prints the requests the model got.
import pg from "pg";
import { Command } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { recordApprovals } from "agent-context-compiler/langchain";
import { FsArtifactStore } from "agent-context-compiler";
import { scriptedApi } from "../wire/index.mjs";
import { approvalModel, langchainApproval, requestsJson } from "../approvals_loop.mjs";

const [dir, url, schema, threadId, decisions] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: url, max: 2 });
const store = new FsArtifactStore({ baseDir: dir });
// One load per thread, however many tool calls ask at once.
const sessions = new Map();
const sessionOf = (id) => sessions.get(id) ?? sessions.set(id, store.loadSession(id)).get(id);
const api = scriptedApi({ reply: approvalModel() });
const agent = await langchainApproval({ sessionOf, store, fetch: api.fetch, checkpointer: new PostgresSaver(pool, undefined, { schema }) });
const config = { configurable: { thread_id: threadId } };
const result = await agent.invoke(new Command({ resume: { decisions: JSON.parse(decisions) } }), config);
const session = await sessionOf(threadId);
const recorded = recordApprovals(session, result);
await session.sync(store);
const waiting = (result.__interrupt__ ?? []).flatMap((i) => i.value.actionRequests.map((a) => a.name));
const last = result.messages.at(-1);
process.stdout.write(JSON.stringify({ requests: requestsJson(api.requests), recorded: recorded.map((e) => e.data.call_id), waiting, text: typeof last.content === "string" ? last.content : "" }));
await pool.end();
