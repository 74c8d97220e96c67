// session.search: the recall index from JS, its options and its errors.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Session } from "agent-context-compiler";

function conversation() {
  const s = new Session({ sessionId: "search" });
  s.record("user_input", { content: "My sister Ada moved to Porto in March 2023." });
  s.record("assistant_output", { content: "Noted. How is she finding it?" });
  s.record("tool_call", { call_id: "c1", tool_name: "read_file", arguments: { path: "src/config/loader.ts" } });
  s.record("tool_success", { call_id: "c1", tool_name: "read_file", result: "export const retries = 7; // see ticket OPS-4412" });
  s.record("user_input", { content: "Let's plan the release." });
  return s;
}

test("search finds the event holding the answer, most relevant first", () => {
  const s = conversation();
  const hits = s.search("where does Ada live now?");
  assert.equal(hits[0].position, 0);
  assert.equal(hits[0].kind, "user_input");
  assert.equal(hits[0].eventId, s.eventLog.events[0].eventId);
  assert.ok(hits[0].score > 0);
  assert.ok(hits[0].relevance > 0 && hits[0].relevance <= 1);
  assert.deepEqual(Object.keys(hits[0]).sort(), ["distinction", "eventId", "kind", "position", "relevance", "score"]);
  assert.equal(s.search("OPS-4412")[0].position, 3);
  assert.equal(s.search("src/config/loader.ts")[0].position, 2);
  assert.deepEqual(s.search("nothing like this at all"), []);
  s.free();
});

test("limit bounds the results; a bad query or limit is INVALID_ARGUMENT", () => {
  const s = new Session();
  for (let i = 0; i < 30; i++) s.record("user_input", { content: `apples ${i}` });
  assert.equal(s.search("apples").length, 10);
  assert.equal(s.search("apples", { limit: 25 }).length, 25);
  assert.equal(s.search("apples", { limit: 100 }).length, 30);
  for (const limit of [0, 101, -1, 1.5, "3", Infinity]) {
    assert.throws(() => s.search("apples", { limit }), { code: "INVALID_ARGUMENT" }, String(limit));
  }
  for (const query of [undefined, null, 42, {}, ["apples"]]) {
    assert.throws(() => s.search(query), { code: "INVALID_ARGUMENT" });
  }
  assert.throws(() => s.search("apples", [1]), { code: "INVALID_ARGUMENT" });
  s.free();
});

test("an imported session searches exactly as the one that recorded", () => {
  const s = conversation();
  const before = s.search("release plan Porto ticket");
  const copy = Session.importJson(s.exportJson());
  assert.deepEqual(copy.search("release plan Porto ticket"), before);
  // Recording after a search extends the index.
  s.record("user_input", { content: "Porto again" });
  copy.record("user_input", { content: "Porto again" });
  assert.deepEqual(
    copy.search("Porto").map((h) => h.position),
    s.search("Porto").map((h) => h.position),
  );
  s.free();
  copy.free();
});
