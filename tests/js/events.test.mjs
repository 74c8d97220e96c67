// isEvent and the declared data of each kind: every event a run records has
// the fields js/events.d.ts declares for its kind.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Session, InMemoryBackend, MemoryArtifactStore, isEvent, runCompiled } from "agent-context-compiler";

/** The required (not optional) fields js/events.d.ts declares per kind. */
function declaredFields() {
  const source = readFileSync(new URL("../../js/events.d.ts", import.meta.url), "utf8");
  const body = /export interface KnownEventData \{([\s\S]*?)\n\}/.exec(source)[1];
  const fields = {};
  for (const [, kind, all] of body.matchAll(/^\s+(\w+): \{(.*)\};$/gm)) {
    const shape = all.replace(/\[key: string\]: [^;}]*;?/, "");
    fields[kind] = [...shape.matchAll(/(\w+): /g)].map((m) => m[1]).filter((name) => !new RegExp(`${name}\\?:`).test(shape));
  }
  return fields;
}

test("isEvent tells kinds apart and refuses what is not an event", () => {
  const s = new Session();
  const e = s.record("tool_error", { tool: "t", call_id: "c", error: "boom" });
  assert.equal(isEvent(e, "tool_error"), true);
  assert.equal(isEvent(e, "tool_success"), false);
  for (const x of [null, undefined, 42, "tool_error", { kind: "tool_error" }, { kind: "tool_error", data: null }]) assert.equal(isEvent(x, "tool_error"), false);
  for (const kind of ["tool_sucess", "deploy", 42, null]) assert.throws(() => isEvent(e, kind), { code: "INVALID_ARGUMENT" });
  s.free();
});

test("every event a run records has the fields declared for its kind", async () => {
  const fields = declaredFields();
  assert.ok(Object.keys(fields).length >= 12, Object.keys(fields).join(", "));
  const memory = new InMemoryBackend();
  memory.store("oncall", "The nightly job writes to db-primary", "core");
  const session = new Session();
  for (let i = 0; i < 60; i++) {
    session.record("user_input", { text: `Question ${i} about the weather and the weekend plans.` });
    session.record("assistant_output", { text: `Answer ${i}: a few ordinary sentences about nothing in particular.` });
  }
  const big = Array.from({ length: 200 }, (_, i) => `line ${i}`).join("\n");
  await runCompiled("Check the nightly job", {
    session, budget: 1500, memory, artifactStore: new MemoryArtifactStore(),
    tools: [{ name: "read_log", description: "the log" }], bridge: () => big,
    guard: () => ({ allowed: true, threatLevel: "low" }),
    model: (_m, { step }) => (step === 0 ? { toolCalls: [{ id: "c1", name: "read_log" }], usage: { prompt_tokens: 300, completion_tokens: 5 } } : { content: "fine", usage: { prompt_tokens: 390, completion_tokens: 2 } }),
  });
  session.record("memory_hit", { key: "k", content: "v", pinned: true });
  const seen = new Set();
  for (const e of session.eventLog.events) {
    seen.add(e.kind);
    assert.ok(fields[e.kind], `${e.kind} is declared`);
    assert.ok(isEvent(e, e.kind));
    for (const f of fields[e.kind]) assert.ok(f in e.data, `${e.kind}.${f} in ${JSON.stringify(e.data).slice(0, 200)}`);
  }
  for (const kind of ["user_input", "guard_decision", "model_usage", "tool_call", "tool_success", "artifact_stored", "assistant_output", "context_compacted", "memory_hit"]) assert.ok(seen.has(kind), kind);
  session.free();
});
