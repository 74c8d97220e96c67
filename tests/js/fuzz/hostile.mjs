// Hostile JS values and mutated real files for the converters' fuzz loop
// (tests/js/fuzz_converters.test.mjs): a seeded random source, values of
// every JS type at the limits the converters check, and byte edits of the
// seeds under tests/fixtures/ (the same kinds of edits as the Rust
// harness's tests/fuzz/mutate.rs).
import { readFileSync } from "node:fs";

/** A seeded random source (mulberry32): `next()` in [0, 1). */
export function random(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  const pick = (items) => items[int(items.length)];
  return { next, int, pick };
}

/** The bytes of `name` under tests/fixtures/. */
export const fixture = (name) =>
  new Uint8Array(readFileSync(new URL(`../../fixtures/${name}`, import.meta.url)));

/** The error a hostile getter or proxy throws (passed through as is). */
export class HostError extends Error {}

const strings = [
  "", "x", "__proto__", "constructor", "\ud800", "\udc00x", "\u0000", "é😀", "a".repeat(5000),
  "null", "{\"a\":1}", "user_input", "tool_call", "tool_success", "openai", "anthropic", "gemini",
  "application/pdf", "image/png", "-1", "1e400", "call_0", "gpt-4.1",
];
const numbers = [0, -0, 1, -1, 0.5, NaN, Infinity, -Infinity, 2 ** 31, 2 ** 32, 2 ** 32 - 6, 2 ** 53 + 2,
  Number.MAX_VALUE, Number.MIN_VALUE, 1e21, 4294967290];

/** A hostile value, up to `depth` levels deep. */
export function hostile(rng, depth = 3) {
  const leaf = [
    () => rng.pick(strings),
    () => rng.pick(numbers),
    () => rng.next() < 0.5,
    () => null,
    () => undefined,
    () => Symbol("s"),
    () => 10n ** BigInt(rng.int(30)),
    () => () => 1,
    () => new Date(rng.pick([0, NaN, 8.64e15 + 1])),
    () => /re/g,
    () => new Map([["k", 1]]),
    () => new Set([1]),
    () => new Uint8Array(rng.int(16)),
    () => new ArrayBuffer(rng.int(16)),
    () => Object.create(null),
  ];
  const nested = [
    () => Array.from({ length: rng.int(5) }, () => hostile(rng, depth - 1)),
    () => Object.fromEntries(Array.from({ length: rng.int(5) }, () => [rng.pick(strings), hostile(rng, depth - 1)])),
    () => JSON.parse(`{"__proto__": {"polluted": 1}, "k": ${JSON.stringify(rng.pick(strings))}}`),
    () => { const o = { a: 1 }; o.self = o; return o; },
    () => { const a = []; a[rng.int(50)] = 1; return a; },
    () => Object.defineProperty({}, "text", { enumerable: true, get() { throw new HostError("getter"); } }),
    () => new Proxy({}, { ownKeys() { throw new HostError("ownKeys"); }, get() { throw new HostError("get"); } }),
    () => { let v = null; for (let i = 0; i < 300; i++) v = [v]; return v; },
    // An array whose element reads throw (`then` answers, so that a promise
    // resolving to it reads it), and a revoked Proxy.
    () => new Proxy([1, 2], { get(_, key) { if (key === "then") return undefined; throw new HostError("get"); } }),
    () => { const r = Proxy.revocable([], {}); r.revoke(); return r.proxy; },
  ];
  if (depth <= 0 || rng.next() < 0.5) return rng.pick(leaf)();
  return rng.pick(nested)();
}

/** `object` with up to three members replaced by hostile values. */
export function spoil(rng, object) {
  const out = { ...object };
  const keys = Object.keys(out);
  for (let i = rng.int(4); i > 0 && keys.length; i--) {
    out[rng.pick(keys)] = hostile(rng, 2);
  }
  if (rng.next() < 0.2) out[rng.pick(strings)] = hostile(rng, 1);
  return out;
}

const pdfTokens = ["/Length 4294967290", "/Length 4294967295 ", "/Length 18446744073709551615", "stream\r\n",
  "endstream", "<<", ">>", "/Type /ObjStm", "/Filter /FlateDecode", "/Type /Pages /Count 4294967295", "/Type /Page",
  "<</Linearized 1/N 4294967295>>", "\x78\x9c"].map((t) => Uint8Array.from(t, (c) => c.charCodeAt(0)));
const imageTokens = ["\x89PNG\r\n\x1a\n", "IHDR", "\xff\xd8\xff", "\xff\xc0", "GIF89a", "RIFF", "WEBP", "VP8X", "VP8L",
  "\xff\xff\xff\xff", "\x00\x00\x00\x00"].map((t) => Uint8Array.from(t, (c) => c.charCodeAt(0)));
const jsonTokens = ["\"eventId\":\"\"", "\"timestamp\":1e400", "\"tokenEstimate\":-5", "\"kind\":\"\"", "null", "{", "}",
  "[", "]", ",", "\"", "\"\\ud800\""].map((t) => new TextEncoder().encode(t));

/** `seed` with up to `max` byte edits: flips, inserts, deletes, cuts, splices, tokens. */
export function mutate(rng, seed, kind = "pdf", max = 8) {
  const tokens = { pdf: pdfTokens, image: imageTokens, json: jsonTokens }[kind];
  let b = Array.from(seed);
  for (let n = rng.int(max + 1); n > 0; n--) {
    const at = rng.int(b.length + 1);
    switch (rng.int(6)) {
      case 0: if (b.length) b[Math.min(at, b.length - 1)] ^= 1 + rng.int(255); break;
      case 1: b.splice(at, 0, ...Array.from({ length: 1 + rng.int(8) }, () => rng.int(256))); break;
      case 2: b.splice(at, 1 + rng.int(32)); break;
      case 3: b.splice(at, 0, ...rng.pick(tokens)); break;
      case 4: b = b.slice(0, at); break;
      default: { const from = rng.int(b.length + 1); b.splice(at, 0, ...b.slice(from, from + 1 + rng.int(64))); }
    }
  }
  return Uint8Array.from(b);
}
