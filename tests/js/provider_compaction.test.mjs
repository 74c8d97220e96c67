// The providers' own compaction, passed through (issue 63, item 3).
// Anthropic's `compaction` block (`BetaCompactionBlock`, from a whole reply or
// the SDK's own Stream with its `compaction_delta`) is recorded as it came and
// sent back first in the conversation, with the turns before it folded and
// the beta the request needs; OpenAI's `responses.compact` output
// (`CompactedResponse`) is recorded with `session.recordCompaction` and sent
// in place of what it folded. Every other format leaves them out (`refused`)
// and keeps the turns; spans and search never see them; checkRequest knows
// where they go. No provider is reachable: the SDKs' request code runs over a
// scripted fetch.
import { test } from "node:test";
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import { Stream as AnthropicStream } from "@anthropic-ai/sdk/streaming";
import OpenAI from "openai";
import { ContextCompiler, HistorySelector, Session, checkRequest, runCompiled } from "agent-context-compiler";
import { tracedSpans } from "./traced.mjs";

const SECRET = "sk-proj-4fGh8JkL2mN6pQ9rStUvWxYz0123456789abcdefAB";
/** A `BetaCompactionBlock` as a reply carries it; its summary quotes a
 * secret-looking string that redaction would change. */
const block = {
  type: "compaction",
  content: `Summary: the user runs nightly jobs on /data; the key ${SECRET} was rotated.`,
  encrypted_content: "EqQBCkYIBxgCKkBopaque",
  signature: "sig-4f1a",
};
const tools = [{ name: "df", description: "disk usage", parameters: { type: "object", properties: {} } }];
const sse = (events) => new Response(events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(""));

const compiler = () => new ContextCompiler({ layout: "zoned", processors: [new HistorySelector()] });

/** A session with three earlier exchanges. */
function earlier() {
  const session = new Session();
  for (const [q, a] of [["We run nightly jobs on /data.", "Noted."], ["The old key was rotated yesterday.", "Understood."], ["Jobs write reports to /data/out.", "Got it."]]) {
    session.record("user_input", { text: q });
    session.record("assistant_output", { text: a });
  }
  return session;
}

/** Runs one turn whose first reply is `first()`; the requests it sent. */
async function turn(session, format, first, extra = {}) {
  const requests = [];
  await runCompiled("Why did the job fail?", {
    session, budget: 8000, systemPrompt: "You are an SRE.", format, tools,
    bridge: () => "/data 100% used",
    model: async (request, { step }) => {
      requests.push(structuredClone(request));
      return step === 0 ? first() : "The disk is full.";
    },
    ...extra,
  });
  return requests;
}

const message = {
  id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-5",
  content: [block, { type: "tool_use", id: "toolu_1", name: "df", input: {} }],
  stop_reason: "tool_use", stop_sequence: null,
  usage: { input_tokens: 150000, output_tokens: 40 },
};

/** What the Anthropic SDK's beta request code sends for `request`. */
async function anthropicWire(request) {
  const sent = [];
  const client = new Anthropic({
    apiKey: "test", maxRetries: 0,
    fetch: async (url, init) => {
      sent.push({ url: String(url), headers: new Headers(init.headers), body: JSON.parse(init.body) });
      return new Response(JSON.stringify({ ...message, content: [{ type: "text", text: "ok" }], stop_reason: "end_turn" }), { headers: { "content-type": "application/json" } });
    },
  });
  await client.beta.messages.create({ model: "claude-sonnet-4-5", max_tokens: 1024, ...request });
  return sent[0];
}

function assertSentFirst(request) {
  assert.deepEqual(checkRequest(request, { format: "anthropic" }), []);
  assert.equal(request.messages[0].role, "assistant");
  assert.deepEqual(request.messages[0].content[0], block, "byte-exact, first");
  assert.deepEqual(request.betas, ["compact-2026-01-12"]);
  const text = JSON.stringify(request);
  assert.ok(text.includes(SECRET), "nothing redacted inside the block");
  for (const folded of ["nightly jobs on /data.", "rotated yesterday", "Why did the job fail?"]) {
    assert.ok(!text.replace(block.content, "").includes(folded), `${folded} is folded`);
  }
}

test("a reply's compaction block goes first, folds the turns before it, carries its beta", async () => {
  const session = earlier();
  const [, second] = await turn(session, "anthropic", () => message);
  assertSentFirst(second);
  const recorded = session.eventLog.events.filter((e) => e.kind === "provider_compaction");
  assert.equal(recorded.length, 1);
  assert.deepEqual(recorded[0].data, { format: "anthropic", items: [block] });
  // The SDK's own request code takes it as it is: the block first, the beta header.
  const wire = await anthropicWire(second);
  assert.deepEqual(wire.body.messages[0].content[0], block);
  assert.match(wire.headers.get("anthropic-beta"), /compact-2026-01-12/);
  assert.equal(wire.body.betas, undefined, "betas travel as the header");
  // The ledger lists the turns before it as compacted.
  const ctx = await compiler().compile(session, 8000, { systemPrompt: "You are an SRE.", format: "anthropic" });
  assertSentFirst(ctx.toMessages({ format: "anthropic" }));
  const ledger = ctx.ledger;
  assert.ok(ledger.included.some((p) => p.reason === "providerCompaction" && p.eventIds.includes(recorded[0].eventId)));
  const first = session.eventLog.events[0].eventId;
  assert.ok(ledger.excluded.some((e) => e.reason === "compacted" && e.eventIds.includes(first)));
  assert.equal(ledger.included.reduce((n, p) => n + p.tokens, 0), ctx.tokenCount);
  assert.ok(ctx.tokenCount <= ctx.budget);
});

test("a compaction block read from the SDK's stream goes back whole", async () => {
  const events = [
    { type: "message_start", message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 150000, output_tokens: 1 } } },
    { type: "content_block_start", index: 0, content_block: { type: "compaction", content: null, encrypted_content: null } },
    { type: "content_block_delta", index: 0, delta: { type: "compaction_delta", content: block.content, encrypted_content: block.encrypted_content } },
    { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: block.signature } },
    { type: "content_block_stop", index: 0 },
    { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_1", name: "df", input: {} } },
    { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "{}" } },
    { type: "content_block_stop", index: 1 },
    { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 40 } },
    { type: "message_stop" },
  ];
  const [, second] = await turn(earlier(), "anthropic", () => AnthropicStream.fromSSEResponse(sse(events), new AbortController()));
  assertSentFirst(second);
});

test("a reply paused after compaction (the block alone) is asked again, the block first", async () => {
  const session = earlier();
  const paused = { ...message, content: [block], stop_reason: "compaction" };
  const requests = [];
  const result = await runCompiled("Why did the job fail?", {
    session, budget: 8000, systemPrompt: "You are an SRE.", format: "anthropic",
    model: async (request, { step }) => {
      requests.push(structuredClone(request));
      return step === 0 ? paused : "The disk is full.";
    },
  });
  assert.equal(result.result, "The disk is full.");
  assert.equal(result.stopReason, "answered");
  assertSentFirst(requests[1]);
  const kinds = session.eventLog.events.map((e) => e.kind);
  assert.equal(kinds.filter((k) => k === "provider_compaction").length, 1);
  assert.equal(kinds.filter((k) => k === "assistant_output").length, 4, "no empty answer recorded");
});

test("every other format leaves it out (refused) and keeps the turns", async () => {
  const session = earlier();
  await turn(session, "anthropic", () => message);
  const id = session.eventLog.events.find((e) => e.kind === "provider_compaction").eventId;
  for (const format of ["openai", "openai-responses", "gemini", "ai-sdk", "plain"]) {
    const ctx = await compiler().compile(session, 8000, { systemPrompt: "You are an SRE.", format });
    const request = ctx.toMessages({ format });
    const text = JSON.stringify(request);
    assert.ok(!text.includes(block.signature) && !text.includes(SECRET), format);
    assert.ok(text.includes("nightly jobs on /data"), `${format} keeps the turns`);
    assert.deepEqual(checkRequest(request, { format }), [], format);
    assert.ok(ctx.dropped.some((d) => d.action === "refused" && d.eventId === id), format);
  }
  assert.ok(session.search("rotated").every((h) => h.eventId !== id), "never searchable");
});

test("never in a span, even with traceContent", async () => {
  const spans = await tracedSpans((tracer) => turn(earlier(), "anthropic", () => message, { tracer, traceContent: true }));
  assert.ok(spans.length > 0);
  const attributes = JSON.stringify(spans.map((s) => s.attributes));
  assert.ok(!attributes.includes(block.signature) && !attributes.includes(block.encrypted_content));
});

/** A `CompactedResponse` from `responses.compact`. */
const compacted = {
  id: "cmp_1", object: "response.compaction", created_at: 1767000000,
  output: [
    { type: "message", role: "user", content: [{ type: "input_text", text: "We run nightly jobs on /data." }] },
    { type: "compaction", id: "cmp_item_1", encrypted_content: "gAAAAABopaque" },
  ],
  usage: { input_tokens: 120, output_tokens: 30, total_tokens: 150, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
};

test("recordCompaction keeps a responses.compact output, sent in place of what it folded", async () => {
  const session = earlier();
  const event = session.recordCompaction(compacted, { format: "openai-responses" });
  assert.equal(event.kind, "provider_compaction");
  const [first] = await turn(session, "openai-responses", () => "The disk is full.");
  assert.deepEqual(checkRequest(first, { format: "openai-responses" }), []);
  assert.deepEqual(first.input.slice(0, 2), compacted.output);
  assert.ok(!JSON.stringify(first).includes("rotated yesterday"));
  assert.ok(JSON.stringify(first).includes("Why did the job fail?"));
  // The SDK's request code sends it as the input.
  let body;
  const client = new OpenAI({ apiKey: "test", maxRetries: 0, fetch: async (_url, init) => {
    body = JSON.parse(init.body);
    return new Response(JSON.stringify({ id: "resp_1", object: "response", output: [], status: "completed" }), { headers: { "content-type": "application/json" } });
  } });
  await client.responses.create({ model: "gpt-5", ...first });
  assert.deepEqual(body.input.slice(0, 2), compacted.output);
  // Another format keeps the turns.
  const [other] = await turn(session, "anthropic", () => "The disk is full.");
  assert.ok(!JSON.stringify(other).includes("gAAAAABopaque") && JSON.stringify(other).includes("rotated yesterday"));
});

test("recordCompaction refuses what is not a compaction", () => {
  const session = new Session();
  const bad = [
    [{ output: [] }, { format: "openai-responses" }],
    [[{ type: "compaction", encrypted_content: "a" }, { type: "compaction", encrypted_content: "b" }], { format: "openai-responses" }],
    [{ type: "text", text: "hi" }, { format: "anthropic" }],
    [block, { format: "gemini" }],
    [block, {}],
  ];
  for (const [output, options] of bad) {
    assert.throws(() => session.recordCompaction(output, options), (e) => e.code === "INVALID_ARGUMENT", JSON.stringify(output));
  }
  assert.equal(session.eventLog.length, 0);
  session.recordCompaction(message, { format: "anthropic" });
  assert.deepEqual(session.eventLog.events[0].data.items, [block]);
  // A loop of the host's own records a reply's block with the reply.
  const host = new Session();
  host.recordReply(message);
  const kinds = host.eventLog.events.map((e) => e.kind);
  assert.equal(kinds.filter((k) => k === "provider_compaction").length, 1);
  assert.deepEqual(host.eventLog.events.find((e) => e.kind === "provider_compaction").data.items, [block]);
});

test("checkRequest knows where a compaction goes", () => {
  const user = { role: "user", content: "Why?" };
  const betas = ["compact-2026-01-12"];
  const rules = (request, format = "anthropic") => checkRequest(request, { format }).map((v) => v.rule);
  assert.deepEqual(rules({ betas, messages: [{ role: "assistant", content: [block] }, user] }), []);
  assert.deepEqual(rules({ betas, messages: [user, { role: "assistant", content: [{ type: "text", text: "Hi" }, block] }] }), ["anthropic.compaction_first"]);
  assert.deepEqual(rules({ betas, messages: [{ role: "assistant", content: [block, block] }, user] }), ["anthropic.compaction_one"]);
  assert.deepEqual(rules({ messages: [{ role: "assistant", content: [block] }, user] }), ["anthropic.compaction_beta"]);
  const item = { type: "compaction", encrypted_content: "gAAA" };
  const answer = { type: "message", role: "assistant", content: "Hi" };
  assert.deepEqual(rules({ input: [answer, item] }, "openai-responses"), ["openai_responses.compaction_first"]);
  assert.deepEqual(rules({ input: [item, item] }, "openai-responses"), ["openai_responses.compaction_one"]);
});
