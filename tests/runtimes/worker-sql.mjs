// workerd: the README's Durable Object recipe, run. A Durable Object with
// SQLite storage keeps a conversation in SqliteArtifactStore over
// sqlConnection(ctx.storage); each request loads the session (or starts it),
// records a turn and syncs. `workerd test` runs `test()`: one request
// records, a new request reloads what it saved, then twelve concurrent
// requests record into the same object, and a last one reads the session.
import * as lib from "agent-context-compiler";
import wasm from "agent-context-compiler/context_compiler.wasm";
import storesWasm from "agent-context-compiler/stores.wasm";

lib.initSync({ main: wasm, stores: storesWasm });

/** The recipe: one conversation per Durable Object, in its SQLite storage. */
export class Conversation {
  constructor(ctx) {
    this.store = new lib.SqliteArtifactStore(lib.sqlConnection(ctx.storage));
  }

  async fetch(request) {
    const url = new URL(request.url);
    try {
      const session = (await this.store.loadSession("chat")) ?? new lib.Session({ sessionId: "chat" });
      try {
        if (url.pathname === "/say") {
          session.record("user_input", url.searchParams.get("text"));
          session.record("assistant_output", `heard ${url.searchParams.get("text")}`);
          const report = await session.sync(this.store);
          return Response.json(report);
        }
        const events = JSON.parse(session.exportJson()).events;
        return Response.json({ texts: events.filter((e) => e.kind === "user_input").map((e) => e.data), events: events.length });
      } finally {
        session.free();
      }
    } catch (e) {
      return new Response(`${e.code ?? "Error"}: ${e.message}\n${e.stack}`, { status: 500 });
    }
  }
}

export default {
  async test(_controller, env) {
    const stub = () => env.CONVERSATION.get(env.CONVERSATION.idFromName("chat"));
    const call = async (path) => {
      const response = await stub().fetch(`http://chat${path}`);
      const body = await response.text();
      if (!response.ok) throw new Error(body);
      return JSON.parse(body);
    };
    const first = await call("/say?text=first");
    const reloaded = await call("/read");
    const concurrent = await Promise.all(Array.from({ length: 12 }, (_, i) => call(`/say?text=c${i}`)));
    const after = await call("/read");
    console.log(`DURABLE ${JSON.stringify({ first, reloaded, written: concurrent.map((r) => r.eventsWritten), after })}`);
  },
};
