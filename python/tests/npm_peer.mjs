// The npm package beside the Python one, for python/tests/test_npm_parity.py:
// run by Deno (whose node:sqlite Node 20 lacks) over the built package (pkg/).
//   deno run --allow-read --allow-write --allow-env npm_peer.mjs <command> ...
//   export <file>                          a session with every kind of event, exported
//   import <file>                          a session exported by Python: its events and a compile
//   writer sqlite|files <place> <id> <tag> <count>
//                                          appends <count> events to <id>, syncing after each
//   read sqlite|files <place> <id>         the texts saved under <id>
import { DatabaseSync } from "node:sqlite";
import * as lib from "../../pkg/entry-node.js";

const [command, ...args] = Deno.args;

/** The store at `place`: a SQLite file (waiting on a writer's lock) or a directory. */
function store(kind, place) {
  if (kind === "files") return new lib.FsArtifactStore({ baseDir: place });
  const db = new DatabaseSync(place);
  db.exec("PRAGMA busy_timeout = 30000");
  return new lib.SqliteArtifactStore(lib.sqlConnection(db));
}

if (command === "export") {
  const session = new lib.Session({ sessionId: "from-npm" });
  session.record("user_input", { text: "Why did the nightly job fail?" });
  session.record("tool_call", { tool: "read_logs", arguments: { day: 3 }, call_id: "c1" });
  session.record("tool_success", { tool: "read_logs", call_id: "c1", result: "timeout on db-primary sk-live-0123456789abcdefghijklmnop" });
  session.record("assistant_output", { text: "It timed out on db-primary." });
  session.recordUsage({ prompt_tokens: 120, completion_tokens: 9 });
  Deno.writeTextFileSync(args[0], session.exportJson());
} else if (command === "import") {
  const session = lib.Session.importJson(Deno.readTextFileSync(args[0]));
  const ctx = await new lib.ContextCompiler({
    layout: "zoned",
    processors: [new lib.HistorySelector({ keepFirst: 1, keepLast: Infinity }), new lib.Compactor()],
  }).compile(session, 4_000, { systemPrompt: "You are an SRE." });
  console.log(JSON.stringify({ sessionId: session.sessionId, exported: session.exportJson(), messages: ctx.toMessages({ format: "openai" }), tokenCount: ctx.tokenCount }));
} else if (command === "writer") {
  const [kind, place, id, tag, count] = args;
  const saved = store(kind, place);
  let session = (await saved.loadSession(id)) ?? new lib.Session({ sessionId: id });
  for (let i = 0; i < Number(count); i++) {
    session.record("user_input", { text: `${tag}-${i}` });
    await session.sync(saved);
  }
  console.log(JSON.stringify({ written: Number(count) }));
} else if (command === "read") {
  const [kind, place, id] = args;
  const session = await store(kind, place).loadSession(id);
  console.log(JSON.stringify(JSON.parse(session.exportJson()).events.map((e) => e.data.text)));
} else {
  throw new Error(`unknown command ${command}`);
}
