// The seed's test_token_budget, ported, plus counter bounds in JS.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { TokenBudget, countTokens, estimateTokens } from "agent-context-compiler";
import { rejectsWithCode } from "./helpers.mjs";

test("budget tracking", () => {
  const b = new TokenBudget(100);
  assert.equal(b.remaining(), 100);
  assert.ok(b.isWithinBudget());
  b.consume(60);
  assert.equal(b.remaining(), 40);
  b.consume(50);
  assert.equal(b.remaining(), -10);
  assert.ok(!b.isWithinBudget());
  assert.equal(b.overflow(), 10);
  assert.equal(b.maxTokens, 100);
  assert.equal(b.consumed, 110);
});

test("budget requires a positive integer max", async () => {
  for (const bad of [0, -1, NaN, 1.5, Infinity, "100", undefined]) {
    await rejectsWithCode(() => new TokenBudget(bad), "INVALID_BUDGET", "max_tokens must be a positive integer");
  }
  const b = new TokenBudget(10);
  for (const bad of [NaN, -3, 0.5]) await rejectsWithCode(() => b.consume(bad), "INVALID_TOKEN_COUNT");
  assert.equal(b.consumed, 0);
});

test("estimate tokens (the seed's words × 1.3)", () => {
  assert.equal(estimateTokens("hello world"), 3);
  assert.equal(estimateTokens(""), 0);
  assert.ok(estimateTokens("a ".repeat(100)) > 100);
});

test("countTokens matches the Rust counter's documented bounds on the o200k fixture", () => {
  const { samples } = JSON.parse(readFileSync(new URL("../fixtures/token_counts.json", import.meta.url), "utf8"));
  const bounds = { prose: 0.2, code: 0.35, json: 0.15, logs: 0.25, cjk: 0.3 };
  for (const s of samples) {
    const err = (countTokens(s.text) - s.o200k) / s.o200k;
    assert.ok(Math.abs(err) <= bounds[s.category], `${s.category}: ${err}`);
  }
  const json = JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ id: i, name: "item" })));
  assert.ok(estimateTokens(json) <= 2 && countTokens(json) > 1000);
});

test("countTokens in wasm (SIMD128 classes) gives exactly the native counter's pinned counts", () => {
  const fixture = (name) => JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), "utf8"));
  const { samples } = fixture("token_counts.json");
  const pinned = fixture("heuristic_counts.json");
  assert.equal(pinned.samples.length, samples.length);
  samples.forEach((s, i) => assert.equal(countTokens(s.text), pinned.samples[i], `sample ${i} (${s.category})`));
  assert.ok(pinned.synthetic.length >= 100);
  for (const { text, count } of pinned.synthetic) assert.equal(countTokens(text), count, JSON.stringify(text));
});

test("countTokens takes strings of any size and alphabet through the text buffer, as through an argument", async () => {
  // The glue's own countTokens takes the string as an argument (wasm-bindgen's
  // copy, or encodeInto from Rust for long strings): the same count.
  const glue = (await import("../../pkg/entry-internals.js")).glue;
  const texts = [
    "",
    "a",
    "héllo wörld, 你好世界 😀 ".repeat(5000),
    "log line 42: ok\n".repeat(200_000), // 3.2 MB: a buffer larger than is kept
    "\ud800 lone \udc00 surrogates \ud83d",
    "x".repeat(255),
    "中".repeat(100_000),
    "after the large ones",
  ];
  for (const text of texts) assert.equal(countTokens(text), glue.countTokens(text), JSON.stringify(text.slice(0, 40)));
  for (const bad of [undefined, 42, null, { length: 3 }]) {
    await rejectsWithCode(() => countTokens(bad), "INVALID_ARGUMENT", "text must be a string");
  }
});

test("countTokens' text buffer holding bytes that are not UTF-8 is INVALID_ARGUMENT, never a trap", async () => {
  // The counter checks the bytes as it counts them (only the non-ASCII
  // stretches need it): garbage written there by hand must be refused.
  const glue = (await import("../../pkg/entry-internals.js")).glue;
  countTokens("warm"); // the buffer exists from the first call on
  const write = (bytes) => {
    const at = glue.__recordTextBuffer(4096);
    new Uint8Array(glue.__memory().buffer, at, bytes.length).set(bytes);
    return bytes.length;
  };
  const ascii = (t) => [...t].map((c) => c.charCodeAt(0));
  const bad = [
    [0xff],
    [...ascii("plain words "), 0x80, ...ascii(" after a stray continuation byte")],
    [...ascii("a lead byte at the very end "), 0xe4, 0xb8],
    [...ascii("x".repeat(100)), 0xed, 0xa0, 0x80, ...ascii("y".repeat(100))], // an encoded surrogate
    [0xc0, 0xaf], // overlong
  ];
  for (const bytes of bad) {
    await rejectsWithCode(() => glue.__countTokensBuffered(write(bytes)), "INVALID_ARGUMENT", "not UTF-8");
  }
  await rejectsWithCode(() => glue.__countTokensBuffered(1e9), "INVALID_ARGUMENT", "longer than its buffer");
  const good = [...ascii("ok "), 0xe4, 0xb8, 0xad, ...ascii(" fine")];
  assert.equal(glue.__countTokensBuffered(write(good)), countTokens("ok 中 fine"));
  assert.equal(countTokens("still counting"), glue.countTokens("still counting"));
});
