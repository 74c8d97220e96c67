// The exact tokenizers ("agent-context-compiler/tokenizers"): the same counts
// as js-tiktoken (OpenAI's tiktoken ported to JS), loaded only when asked for,
// and budgets that hold in the provider's own tokens.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Tiktoken } from "js-tiktoken/lite";
import o200kRanks from "js-tiktoken/ranks/o200k_base";
import cl100kRanks from "js-tiktoken/ranks/cl100k_base";
import { ContextCompiler, HistorySelector, Session } from "agent-context-compiler";
import { MESSAGE_OVERHEAD, loadTokenizer, loadTokenizerSync } from "agent-context-compiler/tokenizers";
import { rejectsWithCode } from "./helpers.mjs";

/** Runs tests/js/children/`name` in a fresh process; its last line, parsed. */
function child(name) {
  const script = fileURLToPath(new URL(`./children/${name}`, import.meta.url));
  const r = spawnSync(process.execPath, [script], { encoding: "utf8", timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split("\n").pop());
}

const { samples } = JSON.parse(readFileSync(new URL("../fixtures/token_counts.json", import.meta.url), "utf8"));
const edges = [
  "",
  "<|endoftext|> counted as text <|im_start|>",
  "   \n\n\t  trailing spaces   ",
  "😀🤖 emoji, ZWJ 👩‍👩‍👧 and flags 🇫🇷",
  "日本語のテキストと中文文本和한국어 텍스트。",
  "x".repeat(5000),
  "a\u0301 combining, \u200b zero width, \ud800 lone surrogate",
  JSON.stringify({ id: 1, list: [1, 2, 3], nested: { deep: true } }),
];

test("o200k_base and cl100k_base count exactly as js-tiktoken on real samples and edge cases", async () => {
  for (const [encoding, ranks] of [["o200k_base", o200kRanks], ["cl100k_base", cl100kRanks]]) {
    const ours = await loadTokenizer(encoding);
    const oracle = new Tiktoken(ranks);
    assert.equal(ours.encoding, encoding);
    for (const text of [...samples.map((s) => s.text), ...edges]) {
      assert.equal(ours.count(text), oracle.encode(text, [], []).length, `${encoding}: ${JSON.stringify(text.slice(0, 60))}`);
    }
  }
  // The fixture's own o200k counts, made by js-tiktoken when it was written.
  const o200k = loadTokenizerSync("o200k_base");
  for (const s of samples) assert.equal(o200k.count(s.text), s.o200k);
});

test("as a tokenCounter, compiled context fits the budget in the provider's own tokens", async () => {
  const o200k = await loadTokenizer("o200k_base");
  assert.equal(o200k.messageOverhead, MESSAGE_OVERHEAD);
  const s = new Session({ tokenCounter: o200k });
  assert.equal(s.record("user_input", samples[0].text).tokenEstimate, samples[0].o200k);
  for (const sample of samples.slice(1, 60)) s.record(sample.category === "prose" ? "user_input" : "assistant_output", sample.text);
  for (const budget of [2_000, 8_000, 30_000]) {
    const ctx = await new ContextCompiler({ processors: [new HistorySelector({ keepFirst: 1, keepLast: 200 })], layout: "zoned" })
      .compile(s, budget, { systemPrompt: "You are precise." });
    const messages = ctx.toMessages();
    const exact = messages.reduce((n, m) => n + o200k.count(m.content) + MESSAGE_OVERHEAD, 0);
    assert.ok(exact <= budget, `${exact} > ${budget}`);
    assert.equal(exact, ctx.tokenCount, "the compile's own count is the exact one");
  }
});

test("bad arguments are coded errors; a module given as bytes loads without the package's files", async () => {
  await rejectsWithCode(() => loadTokenizer("p50k_base"), "INVALID_ARGUMENT", "unknown encoding");
  await rejectsWithCode(() => loadTokenizerSync("toString"), "INVALID_ARGUMENT", "unknown encoding");
  const o200k = await loadTokenizer("o200k_base");
  await rejectsWithCode(() => o200k.count(42), "INVALID_ARGUMENT", "count expects a string");
  // The web build fetches by default; synchronously it needs the module.
  const out = child("tokenizer_web.mjs");
  assert.equal(out.before.code, "NOT_INITIALIZED");
  assert.match(out.before.message, /tokenizers\/cl100k_base\.wasm/);
  assert.equal(out.count, 2);
});

test("the tokenizer modules are read only when a tokenizer is loaded, once", () => {
  const out = child("tokenizer_lazy.mjs");
  assert.deepEqual(out.withoutTokenizers, ["context_compiler_bg.wasm"]);
  assert.deepEqual(out.afterImport, ["context_compiler_bg.wasm"]);
  assert.deepEqual(out.afterLoad, ["context_compiler_bg.wasm", "context_compiler_o200k_base_bg.wasm"]);
});
