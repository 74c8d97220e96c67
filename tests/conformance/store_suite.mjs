// The store conformance suite (tests/fixtures/store_conformance.json) for the
// JS faces of every backend. Plain ES module with no Node imports: it runs in
// Node (memory, KV over a Map, KV with Deno's 64 KiB limit, ...) and in
// headless Chromium (IndexedDB in a page and in a worker).
//
// A backend is { make(): Promise<store>, corrupt(store, artifactId): Promise<void>,
// largeSize: number }.


function fail(message) {
  throw new Error(message);
}
function eq(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) fail(`${what}: expected ${e}, got ${a}`);
}
function ok(value, what) {
  if (!value) fail(what);
}
async function rejectsWith(promise, code) {
  try {
    await promise;
  } catch (e) {
    if (e?.code !== code) fail(`expected ${code}, got ${e?.code}: ${e?.message}`);
    return e;
  }
  fail(`expected a rejection with ${code}`);
}
function sameBytes(a, b) {
  if (!(a instanceof Uint8Array)) return false;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
function pattern(size, salt) {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = (i * 31 + salt) & 0xff;
  return out;
}
const text = (s) => new TextEncoder().encode(s);

function recorded(lib, id, turns) {
  const s = new lib.Session({ sessionId: id });
  for (let i = 0; i < turns; i++) {
    s.record("user_input", `question ${i}`);
    s.record("tool_success", { tool: "t", result: { i } });
  }
  return s;
}

const cases = {
  async store_retrieve(lib, store) {
    const h = await store.store(text("hello world"), "tool:x");
    eq(h.artifactId, lib.contentId("hello world"), "artifactId");
    eq([h.sizeBytes, h.source, h.mimeType], [11, "tool:x", "text/plain"], "handle");
    ok(sameBytes(await store.retrieve(h.artifactId), text("hello world")), "bytes differ");
  },
  async absent(lib, store) {
    const id = lib.contentId("never stored");
    eq(await store.retrieve(id), null, "retrieve");
    eq(await store.exists(id), false, "exists");
    eq(await store.delete(id), false, "delete");
  },
  async dedup(lib, store) {
    const a = await store.store("same", "a");
    const b = await store.store("same", "b");
    eq(b, a, "second handle");
    eq((await store.listHandles()).length, 1, "stored copies");
  },
  async exists(lib, store) {
    const h = await store.store("here", "s");
    eq(await store.exists(h.artifactId), true, "after store");
    await store.delete(h.artifactId);
    eq(await store.exists(h.artifactId), false, "after delete");
  },
  async list_by_session(lib, store) {
    const a = await store.store("one", "s", { sessionId: "s1" });
    const b = await store.store("two", "s", { sessionId: "s2" });
    const c = await store.store("one", "s", { sessionId: "s2" });
    eq(c.sessionId, "s2", "handle session");
    const s1 = await store.listHandles("s1");
    eq(s1.map((h) => [h.artifactId, h.sessionId]), [[a.artifactId, "s1"]], "s1");
    const s2 = (await store.listHandles("s2")).map((h) => h.artifactId);
    eq(s2, [a.artifactId, b.artifactId].sort(), "s2");
    eq((await store.listHandles()).length, 2, "all");
    eq(await store.listHandles("nobody"), [], "nobody");
  },
  async delete(lib, store) {
    const h = await store.store("gone soon", "s", { sessionId: "s1" });
    eq(await store.delete(h.artifactId), true, "delete");
    eq(await store.retrieve(h.artifactId), null, "retrieve after delete");
    eq(await store.listHandles("s1"), [], "session listing");
    eq(await store.listHandles(), [], "listing");
  },
  async verified_read(lib, store, backend) {
    const h = await store.store("precious bytes", "s");
    await backend.corrupt(store, h.artifactId);
    await rejectsWith(store.retrieve(h.artifactId), "ARTIFACT_INTEGRITY");
  },
  async large_value(lib, store, backend) {
    const content = pattern(backend.largeSize, 3);
    const h = await store.store(content, "s");
    eq(h.sizeBytes, content.length, "size");
    ok(sameBytes(await store.retrieve(h.artifactId), content), "large value differs");
  },
  async concurrent_same(lib, store, backend) {
    const content = pattern(Math.floor(backend.largeSize / 4), 9);
    const handles = await Promise.all(Array.from({ length: 8 }, () => store.store(content, "s")));
    for (const h of handles) eq(h.artifactId, handles[0].artifactId, "id");
    ok(sameBytes(await store.retrieve(handles[0].artifactId), content), "content differs");
  },
  async concurrent_different(lib, store) {
    const contents = Array.from({ length: 8 }, (_, i) => pattern(5000 + i * 777, i));
    const handles = await Promise.all(contents.map((c) => store.store(c, "s", { sessionId: "c" })));
    for (let i = 0; i < 8; i++) {
      ok(sameBytes(await store.retrieve(handles[i].artifactId), contents[i]), `content ${i} differs`);
    }
    eq((await store.listHandles("c")).length, 8, "listed");
  },
  async session_round_trip(lib, store) {
    const s = recorded(lib, "round", 5);
    await store.saveSession(s);
    const loaded = await store.loadSession("round");
    ok(loaded instanceof lib.Session, "a Session");
    eq(loaded.exportJson(), s.exportJson(), "export");
    eq(await store.loadSession("missing"), null, "missing");
  },
  async session_incremental(lib, store) {
    const s = recorded(lib, "inc", 3);
    eq(await store.saveSession(s), { eventsWritten: 6, rewritten: true }, "first save");
    s.record("user_input", "more");
    eq(await store.saveSession(s), { eventsWritten: 1, rewritten: false }, "second save");
    eq((await store.saveSession(s)).eventsWritten, 0, "third save");
    eq((await store.loadSession("inc")).exportJson(), s.exportJson(), "export");
  },
  async session_stale(lib, store) {
    const saved = recorded(lib, "same-id", 4);
    await store.saveSession(saved);
    // A copy loaded now, then another save from the original.
    const copy = await store.loadSession("same-id");
    saved.record("user_input", "from the first writer");
    await store.saveSession(saved);
    copy.record("user_input", "from the stale copy");
    await rejectsWith(store.saveSession(copy), "STORE_CONFLICT");
    // A different log under the same id.
    const other = new lib.Session({ sessionId: "same-id" });
    other.record("user_input", "new log");
    await rejectsWith(store.saveSession(other), "STORE_CONFLICT");
    eq((await store.loadSession("same-id")).exportJson(), saved.exportJson(), "the saved log is unchanged");
    eq(await store.deleteSession("same-id"), true, "deleted");
    await store.saveSession(other);
    eq((await store.loadSession("same-id")).exportJson(), other.exportJson(), "the other log after delete");
  },
  async session_tail(lib, store) {
    const s = recorded(lib, "tail", 2);
    await store.saveSession(s);
    for (let i = 0; i < 3; i++) {
      s.record("user_input", `more ${i}`);
      await store.saveSession(s);
    }
    const events = JSON.parse(s.exportJson()).events;
    const tail = await store.__loadEventsAfter("tail", 4, events[3].eventId);
    eq([tail.start, tail.expected], [4, 7], "tail start and count");
    eq(JSON.parse(tail.eventsJson), events.slice(4), "tail events");
    const nothingNew = await store.__loadEventsAfter("tail", 7, events[6].eventId);
    eq([nothingNew.start, JSON.parse(nothingNew.eventsJson).length], [7, 0], "nothing new");
    for (const [known, last] of [[4, "not-its-id"], [4, null], [9, events[3].eventId], [0, null]]) {
      const whole = await store.__loadEventsAfter("tail", known, last);
      eq([whole.start, whole.expected], [0, 7], `whole log for ${known} ${last}`);
      eq(JSON.parse(whole.eventsJson), events, `whole log events for ${known} ${last}`);
    }
    eq(await store.__loadEventsAfter("missing", 1, events[0].eventId), null, "unknown session");
  },
  async session_list_delete(lib, store) {
    await store.saveSession(recorded(lib, "b/2", 1));
    await store.saveSession(recorded(lib, "a#1", 1));
    eq(await store.listSessions(), ["a#1", "b/2"], "listed");
    eq(await store.deleteSession("a#1"), true, "deleted");
    eq(await store.deleteSession("a#1"), false, "deleted twice");
    eq(await store.listSessions(), ["b/2"], "after delete");
    eq(await store.loadSession("a#1"), null, "load after delete");
  },

  async session_ids(lib, store) {
    const upper = "X".repeat(1024);
    const cjk = "東".repeat(341);
    for (const id of [upper, cjk]) {
      await store.saveSession(recorded(lib, id, 2));
      const loaded = await store.loadSession(id);
      eq(loaded.sessionId, id, "loaded id");
      eq(loaded.eventLog.length, 4, "loaded events");
      loaded.free?.();
    }
    const expected = [upper, cjk].sort();
    eq(await store.listSessions(), expected, "listed");
    // A lone surrogate is refused, not rewritten to U+FFFD (two ids one).
    const bad = ["x".repeat(1025), "東".repeat(342), "a\u0000b", "a\ud800", "a\udfff"];
    for (const id of bad) {
      await rejectsWith(store.loadSession(id), "INVALID_ARGUMENT");
      await rejectsWith(store.deleteSession(id), "INVALID_ARGUMENT");
      await rejectsWith(store.store(pattern(10, 1), "x", { sessionId: id }), "INVALID_ARGUMENT");
      await rejectsWith(store.listHandles(id), "INVALID_ARGUMENT");
      let refused = null;
      try {
        new lib.Session({ sessionId: id });
      } catch (e) {
        refused = e;
      }
      eq(refused?.code, "INVALID_ARGUMENT", `new Session with ${JSON.stringify(id.slice(0, 8))}`);
    }
    eq(await store.listSessions(), expected, "nothing written");
    eq((await store.listHandles()).length, 0, "nothing stored");
  },
};

/**
 * Runs every behaviour against `backend`, each on a fresh store; resolves to
 * [{ name, ok, error? }] in BEHAVIOURS order.
 */
export async function runStoreSuite(lib, backend) {
  const results = [];
  for (const name of BEHAVIOURS) {
    const store = await backend.make();
    try {
      await cases[name](lib, store, backend);
      results.push({ name, ok: true });
    } catch (e) {
      results.push({ name, ok: false, error: `${e?.code ?? ""} ${e?.message ?? e}\n${e?.stack ?? ""}` });
    } finally {
      await backend.dispose?.(store);
    }
  }
  return results;
}

/** The behaviours this suite implements, in order (checked against the fixture). */
export const BEHAVIOURS = Object.keys(cases);
