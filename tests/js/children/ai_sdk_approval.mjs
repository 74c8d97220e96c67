// Run by ai_sdk_approvals.test.mjs: `node ai_sdk_approval.mjs <dir> <sessionId> <messagesFile> <decisions>`
// resumes a generateText loop paused for approvals in a process of its own:
// the session from an FsArtifactStore at <dir>, the AI SDK's messages from
// the JSON in <messagesFile>; applies <decisions> (JSON: call id ->
// { approve, reason, args }: args edits the call's input in the messages),
// records them, runs until the next pause or the end (the messages written
// back) and prints the requests the model got.
import { readFileSync, writeFileSync } from "node:fs";
import { generateText, isStepCount } from "ai";
import { recordApprovals } from "agent-context-compiler/ai-sdk";
import { FsArtifactStore } from "agent-context-compiler";
import { scriptedApi } from "../wire/index.mjs";
import { aiSdkApproval, approvalModel, requestsJson } from "../approvals_loop.mjs";

const [dir, sessionId, messagesFile, decisions] = process.argv.slice(2);
const store = new FsArtifactStore({ baseDir: dir });
const session = await store.loadSession(sessionId);
const api = scriptedApi({ reply: approvalModel("toolu_") });
const { model, tools } = await aiSdkApproval({ session, store, fetch: api.fetch });
const messages = JSON.parse(readFileSync(messagesFile, "utf8"));
const decided = JSON.parse(decisions);
const parts = messages.filter((m) => m.role === "assistant" && Array.isArray(m.content)).flatMap((m) => m.content);
const responses = [];
for (const request of parts.filter((p) => p.type === "tool-approval-request")) {
  const d = decided[request.toolCallId];
  if (d === undefined) continue;
  // An edit: the call's input changed in the messages, then approved.
  if (d.args) parts.find((p) => p.type === "tool-call" && p.toolCallId === request.toolCallId).input = d.args;
  responses.push({ type: "tool-approval-response", approvalId: request.approvalId, approved: d.approve, ...(d.reason && { reason: d.reason }) });
}
messages.push({ role: "tool", content: responses });
const recorded = recordApprovals(session, messages);
await session.sync(store);
const result = await generateText({ model, tools, messages, stopWhen: isStepCount(8), maxRetries: 0 });
messages.push(...result.responseMessages);
recordApprovals(session, messages);
await session.sync(store);
writeFileSync(messagesFile, JSON.stringify(messages));
const waiting = result.responseMessages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((p) => p.type === "tool-approval-request").map((p) => p.toolCallId);
process.stdout.write(JSON.stringify({ requests: requestsJson(api.requests), recorded: recorded.map((e) => e.kind), waiting, text: result.text }));
