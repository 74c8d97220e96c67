// Run by approvals.test.mjs: `node approval_resume.mjs <dir> <sessionId> <decision-json> [stale]`
// loads the session from the files store in <dir> and resumes its paused
// run with the decision on `call_del`, syncing after recording it. With
// `stale`, it decides on the session as it was before the last sync (the
// copy saved as <sessionId>.json by the first resume), as a process that
// loaded it earlier would. Prints { stopReason, superseded, ran, answers, answer }.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FsArtifactStore, Session, runCompiled } from "agent-context-compiler";

const [dir, sessionId, decisionText, stale] = process.argv.slice(2);
const store = new FsArtifactStore({ baseDir: dir });
const copy = join(dir, `${sessionId}.before.json`);
let session;
if (stale) {
  session = Session.importJson(readFileSync(copy, "utf8"));
} else {
  session = await store.loadSession(sessionId);
  if (!existsSync(copy)) writeFileSync(copy, session.exportJson());
}
const ran = [];
const requests = [];
const specs = [
  { name: "delete_file", description: "Deletes a file", needsApproval: true },
  { name: "read_file", description: "Reads a file" },
];
const result = await runCompiled(null, {
  budget: 4000,
  session,
  tools: specs,
  model: async (messages) => {
    requests.push(messages);
    return "Done.";
  },
  bridge: async (name, args) => {
    ran.push(name);
    return { ok: name, args };
  },
  approvals: { call_del: JSON.parse(decisionText) },
  sync: () => session.sync(store),
});
await session.sync(store);
const first = requests[0] ?? [];
const answers = first.filter((m) => m.role === "tool" && m.tool_call_id === "call_del");
process.stdout.write(JSON.stringify({
  stopReason: result.stopReason,
  superseded: result.superseded,
  ran,
  answers: answers.length,
  answer: answers[0]?.content ?? "",
}));
