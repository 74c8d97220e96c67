// Several writers of one session, for the store fault-injection suites
// (tests/js/store_writers.test.mjs, the browser harness, the child writer
// processes). Plain ES module with no Node imports.

/**
 * Loads session `id` from `store` (or starts it), appends one user input and
 * saves, `count` times; on STORE_CONFLICT it loads again and appends again,
 * as docs/storage.md says. `onAck(text)` is told of each save that resolved.
 * Resolves to { acked, conflicts }.
 */
export async function writer(lib, store, id, name, count, onAck = () => {}) {
  const acked = [];
  let conflicts = 0;
  for (let i = 0; i < count; i++) {
    const text = `${name}-${i}`;
    for (;;) {
      const session = (await store.loadSession(id)) ?? new lib.Session({ sessionId: id });
      session.record("user_input", text);
      try {
        await store.saveSession(session);
        break;
      } catch (e) {
        if (e?.code !== "STORE_CONFLICT") throw e;
        conflicts++;
      } finally {
        session.free();
      }
    }
    acked.push(text);
    onAck(text);
  }
  return { acked, conflicts };
}

/** The texts of the user inputs of session `id` in `store`, in order. */
export async function savedTexts(store, id) {
  const session = await store.loadSession(id);
  if (session === null) return [];
  const texts = JSON.parse(session.exportJson()).events
    .filter((e) => e.kind === "user_input")
    .map((e) => e.data);
  session.free();
  return texts;
}

/**
 * Two writers on two stores over one backend: a stale save rejects whole,
 * racing writers keep every acknowledged event exactly once. Throws on the
 * first failure; resolves to what it saw.
 */
export async function twoWriters(lib, [a, b], { racing = true, id = "shared", count = 10 } = {}) {
  // Stale: both load, both append, A saves, B's save rejects whole.
  const base = new lib.Session({ sessionId: `${id}-stale` });
  base.record("user_input", "first");
  await a.saveSession(base);
  const sa = await a.loadSession(`${id}-stale`);
  const sb = await b.loadSession(`${id}-stale`);
  sa.record("user_input", "from a");
  sb.record("user_input", "from b");
  await a.saveSession(sa);
  let staleCode = null;
  try {
    await b.saveSession(sb);
  } catch (e) {
    staleCode = e?.code ?? String(e);
  }
  if (staleCode !== "STORE_CONFLICT") throw new Error(`stale save: expected STORE_CONFLICT, got ${staleCode}`);
  const stale = await savedTexts(b, `${id}-stale`);
  if (JSON.stringify(stale) !== JSON.stringify(["first", "from a"])) {
    throw new Error(`stale save: the saved session is ${JSON.stringify(stale)}`);
  }
  if (!racing) return { stale };
  const results = await Promise.all([writer(lib, a, id, "a", count), writer(lib, b, id, "b", count)]);
  const acked = results.flatMap((r) => r.acked).sort();
  const saved = (await savedTexts(a, id)).sort();
  if (JSON.stringify(saved) !== JSON.stringify(acked)) {
    throw new Error(`racing writers: acknowledged ${JSON.stringify(acked)}, saved ${JSON.stringify(saved)}`);
  }
  return { stale, acked: acked.length, conflicts: results[0].conflicts + results[1].conflicts };
}

/**
 * Holds one session `id` for its whole life, recording `count` turns (a user
 * input `<name>-<i>` and a reply) and syncing after each, as the README
 * says. Resolves to { acked, tries }.
 */
export async function syncingWriter(lib, store, id, name, count) {
  const session = new lib.Session({ sessionId: id });
  const acked = [];
  let tries = 0;
  try {
    for (let i = 0; i < count; i++) {
      const text = `${name}-${i}`;
      session.record("user_input", text);
      session.record("assistant_output", `re ${text}`);
      tries += (await session.sync(store, { maxTries: 1000 })).tries;
      acked.push(text);
    }
  } finally {
    session.free();
  }
  return { acked, tries };
}

/**
 * What `store` holds of session `id` after syncing writers: the user inputs
 * in order, and whether each is followed by its own reply.
 */
export async function syncedLog(store, id) {
  const session = await store.loadSession(id);
  if (session === null) return { texts: [], paired: true, ids: [] };
  const events = JSON.parse(session.exportJson()).events;
  session.free();
  const texts = events.filter((e) => e.kind === "user_input").map((e) => e.data);
  const paired = events.every((e, i) => e.kind !== "user_input" || events[i + 1]?.data === `re ${e.data}`);
  return { texts, paired, ids: events.map((e) => e.eventId) };
}
