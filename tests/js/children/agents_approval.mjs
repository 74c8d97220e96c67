// Run by openai_agents_approvals.test.mjs: `node agents_approval.mjs <dir> <sessionId> <stateFile> <decisions>`
// resumes a run paused for approvals in a process of its own: the session
// from an FsArtifactStore at <dir>, the run from the RunState text in
// <stateFile>; applies <decisions> (JSON: call id -> { approve, reason }),
// records them, runs until the next pause or the end (the state written
// back to <stateFile>) and prints the requests the model got.
import { readFileSync, writeFileSync } from "node:fs";
import { RunState, run } from "@openai/agents";
import { FsArtifactStore } from "agent-context-compiler";
import { scriptedApi } from "../wire/index.mjs";
import { agentsApproval, approvalModel, requestsJson } from "../approvals_loop.mjs";

const [dir, sessionId, stateFile, decisions] = process.argv.slice(2);
const store = new FsArtifactStore({ baseDir: dir });
const session = await store.loadSession(sessionId);
const api = scriptedApi({ reply: approvalModel() });
const { agent, session: agentsSdkSession, callModelInputFilter, recordApprovals } = await agentsApproval({ session, store, fetch: api.fetch });
const state = await RunState.fromString(agent, readFileSync(stateFile, "utf8"));
const decided = JSON.parse(decisions);
for (const item of state.getInterruptions()) {
  const d = decided[item.rawItem.callId];
  if (d?.approve) state.approve(item);
  else if (d) state.reject(item, { message: d.reason });
}
await recordApprovals(state);
const result = await run(agent, state, { session: agentsSdkSession, callModelInputFilter });
await recordApprovals(result);
writeFileSync(stateFile, result.state.toString());
process.stdout.write(JSON.stringify({ requests: requestsJson(api.requests), interruptions: result.interruptions.map((i) => i.rawItem.callId), finalOutput: result.finalOutput ?? null }));
