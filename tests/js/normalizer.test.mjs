// The seed's test_normalizer, ported, plus SchemaRegistry and redact from JS.
import { test } from "node:test";
import assert from "node:assert/strict";
import { PerceptionAligner, SchemaRegistry, redact } from "agent-context-compiler";
import { rejectsWithCode } from "./helpers.mjs";

function aligner() {
  const reg = new SchemaRegistry();
  reg.register("calc", { type: "object", properties: { result: { type: "number" } }, required: ["result"] });
  return [new PerceptionAligner(reg), reg];
}

test("normalize plain text", () => {
  const [a] = aligner();
  const r = a.normalize("echo", "hello world");
  assert.equal(r.valid, true);
  assert.equal(r.data, "hello world");
  assert.equal(r.summaryConcise, "hello world");
  assert.deepEqual(Object.keys(r).sort(), ["data", "isJson", "redactedFields", "summaryConcise", "summaryDetailed", "valid", "validationErrors"]);
});

test("normalize JSON against its schema", () => {
  const [a] = aligner();
  assert.equal(a.normalize("calc", '{"result": 42}').valid, true);
  const r = a.normalize("calc", '{"wrong": "field"}');
  assert.equal(r.valid, false);
  assert.ok(r.validationErrors.length > 0);
  assert.equal(typeof r.validationErrors[0].instancePath, "string");
});

test("secrets are redacted, in text and inside JSON (the case the seed fails)", () => {
  const [a] = aligner();
  const t = a.normalize("env", "API_KEY=sk-abcdefghijklmnopqrstuvwxyz123456 and password=hunter22");
  assert.ok(!t.summaryConcise.includes("sk-abcdef") && !t.summaryConcise.includes("hunter22"));
  const raw = { config: { api_key: "sk-live-1234567890abcdef", headers: { Authorization: "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdefghijklmnop" } } };
  const j = a.normalize("cfg", JSON.stringify(raw));
  const text = JSON.stringify(j.data);
  assert.ok(!text.includes("sk-live-1234567890abcdef"));
  assert.ok(!text.includes("eyJhbGciOiJIUzI1NiJ9"));
  assert.ok(text.includes('"api_key"'), "keys are kept");
  assert.ok(j.redactedFields.some((f) => f.path === "/config/api_key"));
  // Non-string outputs are serialised first.
  assert.equal(a.normalize("calc", { result: 1 }).valid, true);
  assert.equal(a.normalize("calc", 7).isJson, true);
});

test("summaries stay within their limits", () => {
  const [a] = aligner();
  const r = a.normalize("big", "x".repeat(100_000));
  assert.ok(r.summaryConcise.length <= 200);
  assert.ok(r.summaryDetailed.length <= 2000);
  const j = a.normalize("list", JSON.stringify(Array.from({ length: 500 }, (_, i) => ({ id: i }))));
  assert.match(j.summaryConcise, /500/);
});

test("awkward outputs produce a result, never a crash", () => {
  const [a] = aligner();
  const deep = "[".repeat(100_000) + "1" + "]".repeat(100_000);
  assert.equal(a.normalize("deep", deep).isJson, false);
  const bytes = a.normalize("bin", new Uint8Array([0xff, 0xfe, 0x6f, 0x6b]));
  assert.ok(bytes.summaryConcise.includes("\ufffd"));
  const big = "line of log output status=200\n".repeat(1_800_000);
  assert.ok(big.length >= 50_000_000);
  assert.ok(a.normalize("huge", big).summaryConcise.length <= 200);
});

test("SchemaRegistry: invalid schemas throw, validation is data, MCP discovery, offline resources", async () => {
  const [, reg] = aligner();
  await rejectsWithCode(() => reg.register("bad", { type: "nope" }), "INVALID_SCHEMA", "'bad'");
  await rejectsWithCode(() => reg.register("cyclic", (() => { const o = {}; o.o = o; return o; })()), "NOT_SERIALIZABLE");
  assert.deepEqual(reg.validate("unregistered", 1), { valid: true, errors: [] });
  const r = reg.validate("calc", { result: "x" });
  assert.equal(r.valid, false);
  assert.equal(r.errors[0].instancePath, "/result");
  assert.deepEqual(reg.autoDiscover({ tools: [{ name: "echo", inputSchema: {} }, { name: "n", outputSchema: { type: "integer" } }] }), ["n"]);
  assert.equal(reg.validate("n", 1.5).valid, false);
  reg.addResource("http://localhost:1234/str.json", { type: "string" });
  reg.register("s", { $ref: "http://localhost:1234/str.json" });
  assert.equal(reg.validate("s", "ok").valid, true);
  assert.equal(reg.validate("s", 1).valid, false);
  assert.deepEqual(reg.get("n"), { type: "integer" });
  assert.equal(reg.get("missing"), undefined);
  reg.register("d7", { $schema: "http://json-schema.org/draft-07/schema#", items: [{ type: "string" }] });
  assert.equal(reg.validate("d7", [1]).valid, false);
});

test("redact reports findings with byte spans", () => {
  const token = "ghp_" + "a1B2".repeat(9);
  const text = `token: ${token}`;
  const r = redact(text);
  assert.equal(r.text, "token: [REDACTED:github-token]");
  assert.equal(r.findings.length, 1);
  assert.equal(text.slice(r.findings[0].start, r.findings[0].end), token);
  assert.deepEqual(redact("max_tokens: 4096").findings, []);
});
