// ctx.cache: the prompt prefix a compile repeats from the previous compile of
// the same session by the same compiler, and what broke the rest.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ContextCompiler, HistorySelector, Session, WorkingContext } from "agent-context-compiler";

function turn(session, i) {
  session.record("user_input", `question ${i}: how is service ${i} doing?`);
  session.record("assistant_output", `service ${i} is fine`);
}

test("a compile reports the prefix it repeats and names what broke it", async () => {
  const s = new Session({ sessionId: "cache" });
  for (let i = 0; i < 5; i++) turn(s, i);
  const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity })] });
  const options = { systemPrompt: "You are terse." };
  const first = await compiler.compile(s, 8_000, options);
  assert.equal(first.cache.miss.cause, "first");
  assert.equal(first.cache.prefixTokens, 0);
  assert.deepEqual(first.toJSON().cache, first.cache, "carried in the context's JSON");

  turn(s, 5);
  const grown = await compiler.compile(s, 8_000, options);
  assert.equal(grown.cache.miss, null, "the whole previous context is the prefix");
  assert.equal(grown.cache.prefixTokens, first.tokenCount);
  assert.equal(grown.cache.prefixMessages, first.toMessages().length);

  const changed = await compiler.compile(s, 8_000, { systemPrompt: "You are verbose." });
  assert.deepEqual(
    { cause: changed.cache.miss.cause, index: changed.cache.miss.messageIndex, zone: changed.cache.miss.zone },
    { cause: "system", index: 0, zone: "system" },
  );
  assert.equal(typeof changed.cache.miss.detail, "string");

  const tools = [{ name: "read_logs", description: "Read a service's logs", parameters: { type: "object" } }];
  const withTools = await compiler.compile(s, 8_000, { systemPrompt: "You are verbose.", tools });
  assert.equal(withTools.cache.miss.cause, "tools");

  // Another compiler has its own memory of the session.
  const other = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector()] });
  assert.equal((await other.compile(s, 8_000, options)).cache.miss.cause, "first");
  // A context built by hand has no report.
  assert.equal(new WorkingContext({ systemPrompt: "x" }).cache, null);
});
