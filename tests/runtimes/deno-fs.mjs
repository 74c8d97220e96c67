// Deno: FsArtifactStore through npm:agent-context-compiler (the main entry,
// whose file system is node:fs/promises, which Deno provides). Run with
// `deno run --allow-read --allow-write`, as the README says.
import * as lib from "npm:agent-context-compiler";
import { twoWriters } from "./writers.mjs";

const { ContextCompiler, FsArtifactStore, HistorySelector, ArtifactAttacher, Session } = lib;

const baseDir = await Deno.makeTempDir();
const session = new Session({ sessionId: "deno-fs" });
session.record("user_input", "Why did the nightly job fail?");
session.record("tool_success", { tool_name: "read_logs", output: "job 42 ran out of memory\n".repeat(200) });
// Read by the model: externalised from now on.
session.record("assistant_output", "Job 42 ran out of memory.");
const store = new FsArtifactStore({ baseDir });
const ctx = await new ContextCompiler({ processors: [new HistorySelector(), new ArtifactAttacher(store, { thresholdBytes: 1024 })] }).compile(session, 2000);
const id = ctx.artifactRefs[0].handle;
await store.saveSession(session);
// A second store over the same directory, as after a restart.
const reopened = new FsArtifactStore({ baseDir });
const bytes = await reopened.retrieve(id);
const loaded = await reopened.loadSession("deno-fs");
const files = [];
for await (const e of Deno.readDir(`${baseDir}/a/${id.slice(0, 2)}`)) files.push(e.name);
// Two stores over one directory through Deno's node:fs (hard links included).
const writers = await twoWriters(lib, [new FsArtifactStore({ baseDir }), new FsArtifactStore({ baseDir })], { count: 8 });
console.log(JSON.stringify({
  artifactBytes: bytes.length,
  sameSession: loaded.exportJson() === session.exportJson(),
  artifactFile: files.includes(`${id}.rec`),
  writers: { acked: writers.acked, raced: writers.conflicts > 0 },
}));
await Deno.remove(baseDir, { recursive: true });
