// Generates tests/fixtures/token_counts.json: real text samples with their
// o200k_base token counts, used by the Rust and JS tests to bound the error of
// the default token counter.
//
// The samples come from text found on a Debian machine of the project's kind
// (licences and READMEs, Python and JavaScript sources, C headers, JSON
// package manifests, /var/log, gettext catalogues in Chinese, Japanese and
// Korean). The tokenizer is `js-tiktoken` (it ships the o200k_base ranks, so no
// network is needed). Run once, commit the fixture, not the tokenizer:
//
//   npm i --no-save js-tiktoken@1.0.21 && node scripts/gen-token-fixtures.mjs
import { readFileSync, readdirSync, statSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { Tiktoken } from "js-tiktoken/lite";
import o200k from "js-tiktoken/ranks/o200k_base";

const enc = new Tiktoken(o200k);
const PER_CATEGORY = 40;

// Deterministic PRNG (mulberry32) so the fixture is reproducible from the same files.
let seed = 0x5eed1234;
function rand() {
  seed |= 0;
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

function walk(dir, pred, out = [], depth = 0) {
  if (depth > 6 || !existsSync(dir)) return out;
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    let st;
    try {
      st = statSync(p);
    } catch {
      continue;
    }
    if (st.isDirectory()) walk(p, pred, out, depth + 1);
    else if (pred(p, st)) out.push(p);
  }
  return out;
}

function readText(p) {
  const raw = readFileSync(p);
  const buf = p.endsWith(".gz") ? gunzipSync(raw) : raw;
  return buf.toString("utf8");
}

/** Takes a slice of 200..4000 characters starting at a line boundary. */
function slice(text) {
  const len = 200 + Math.floor(rand() * 3800);
  if (text.length <= len) return text;
  let start = Math.floor(rand() * (text.length - len));
  const nl = text.indexOf("\n", start);
  if (nl >= 0 && nl < start + 200) start = nl + 1;
  return text.slice(start, start + len);
}

function pick(files, n) {
  const chosen = [];
  const pool = files.slice();
  while (chosen.length < n && pool.length) {
    chosen.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]);
  }
  return chosen;
}

/** Reads the translated strings of a GNU gettext .mo catalogue. */
function moStrings(p) {
  const b = readFileSync(p);
  const magic = b.readUInt32LE(0);
  const rd = magic === 0x950412de ? (o) => b.readUInt32LE(o) : (o) => b.readUInt32BE(o);
  const n = rd(8);
  const tOff = rd(16);
  const out = [];
  for (let i = 1; i < n; i++) {
    const len = rd(tOff + i * 8);
    const off = rd(tOff + i * 8 + 4);
    out.push(b.subarray(off, off + len).toString("utf8").split("\0")[0]);
  }
  return out;
}

const samples = [];
function add(category, source, text) {
  if (!text.trim()) return;
  samples.push({ category, source, text, o200k: enc.encode(text).length });
}

// Prose: licences and plain-text/Markdown READMEs.
const prose = [
  ...walk("/usr/share/common-licenses", (p, st) => st.size > 3000),
  ...walk("/usr/share/doc", (p, st) => /README(\.md|\.txt|\.markdown)?(\.gz)?$/.test(p) && st.size > 3000),
];
for (const p of pick(prose, PER_CATEGORY)) add("prose", p, slice(readText(p)));

// Code: Python stdlib, JavaScript from npm, C headers.
const code = [
  ...walk("/root/.pyenv/versions/3.11.7/lib/python3.11", (p, st) => p.endsWith(".py") && st.size > 4000, [], 5),
  ...walk("/usr/lib/node_modules/npm/lib", (p, st) => p.endsWith(".js") && st.size > 4000),
  ...walk("/usr/include", (p, st) => p.endsWith(".h") && st.size > 4000, [], 1),
];
for (const p of pick(code, PER_CATEGORY)) add("code", p, slice(readText(p)));

// JSON: package manifests, pretty and minified (no spaces at all).
const json = walk("/usr/lib/node_modules/npm/node_modules", (p, st) => p.endsWith("package.json") && st.size > 1500);
for (const p of pick(json, PER_CATEGORY)) {
  try {
    const v = JSON.parse(readText(p));
    const text = rand() < 0.5 ? JSON.stringify(v) : JSON.stringify(v, null, 2);
    add("json", p, text.slice(0, 4000));
  } catch {
    // not JSON after all: skip
  }
}

// Logs.
const logs = ["/var/log/dpkg.log", "/var/log/apt/history.log", "/var/log/apt/term.log", "/var/log/alternatives.log"].filter(existsSync);
for (let i = 0; i < PER_CATEGORY; i++) {
  const p = logs[i % logs.length];
  add("logs", p, slice(readText(p)));
}

// CJK: translated messages from gettext catalogues.
for (const lang of ["zh_CN", "ja", "ko"]) {
  const mos = walk(`/usr/share/locale/${lang}/LC_MESSAGES`, (p) => p.endsWith(".mo"));
  const per = Math.ceil(PER_CATEGORY / 3);
  for (const p of pick(mos, per)) {
    const strings = moStrings(p).filter((s) => s.length > 4);
    if (!strings.length) continue;
    const start = Math.floor(rand() * strings.length);
    add("cjk", `${p}`, strings.slice(start, start + 20 + Math.floor(rand() * 40)).join("\n").slice(0, 3000));
  }
}

const out = {
  description:
    "Text samples with their token counts under OpenAI's o200k_base encoding (js-tiktoken 1.0.21), made by scripts/gen-token-fixtures.mjs.",
  encoding: "o200k_base",
  samples,
};
writeFileSync(new URL("../tests/fixtures/token_counts.json", import.meta.url), JSON.stringify(out, null, 1) + "\n");
const counts = {};
for (const s of samples) counts[s.category] = (counts[s.category] || 0) + 1;
console.log(counts);
