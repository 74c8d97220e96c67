// The default token counter against OpenAI's o200k_base and cl100k_base
// (issue 62, item 6), per kind of content a tool returns: JSON, code, logs,
// prose, CJK, base64 and minified text, on a generated corpus, the benches'
// tool outputs (bench/trace.mjs, the coding loop of tests/js/coding_loop.mjs
// and its `read_artifact` pages) and the real samples of
// tests/fixtures/token_counts.json. Prints min, p1 and median of
// default count / exact count per kind and tokenizer.
//
//   node bench/counter_error.mjs            the table
//   node bench/counter_error.mjs --write    also writes the committed fixture
//                                           tests/fixtures/counter_error.json
//                                           (texts and both exact counts),
//                                           from which tests/counter_margins.rs
//                                           derives and asserts the margins
import { readFileSync, writeFileSync } from "node:fs";
import { Tiktoken } from "js-tiktoken/lite";
import o200kRanks from "js-tiktoken/ranks/o200k_base";
import cl100kRanks from "js-tiktoken/ranks/cl100k_base";
import { countTokens } from "agent-context-compiler";
import { rng, prose, logs, jsonListing, source } from "./trace.mjs";
import { turnPlan, TURNS } from "../tests/js/coding_loop.mjs";

const FIXTURE = new URL("../tests/fixtures/counter_error.json", import.meta.url);
const REAL = new URL("../tests/fixtures/token_counts.json", import.meta.url);
/** The kinds, in the table's order. */
export const KINDS = ["json", "code", "logs", "prose", "cjk", "mixed", "base64", "minified"];

const CJK = [
  "服务器在凌晨三点重新启动，所有请求都已恢复正常。",
  "请检查配置文件中的数据库连接字符串是否正确。",
  "该任务因磁盘配额不足而失败，请清理临时目录后重试。",
  "ファイルの読み込み中にエラーが発生しました。権限を確認してください。",
  "デプロイは正常に完了し、新しいバージョンが稼働しています。",
  "キャッシュの有効期限が切れたため、データを再取得します。",
  "요청 시간이 초과되었습니다. 네트워크 연결을 확인하세요.",
  "데이터베이스 마이그레이션이 성공적으로 완료되었습니다.",
  "사용자 세션이 만료되어 다시 로그인해야 합니다。",
];

/** A generated sample of `kind`, about `chars` long, from `r`. */
function generated(kind, r, chars) {
  switch (kind) {
    case "json": {
      const listing = JSON.parse(jsonListing(r, chars));
      return r() < 0.5 ? JSON.stringify(listing) : JSON.stringify(listing, null, 2).slice(0, chars * 2);
    }
    case "code":
      return source(r, chars);
    case "logs":
      return logs(r, chars);
    case "prose":
      return prose(r, chars);
    case "cjk": {
      let out = "";
      while (out.length < chars / 2) out += CJK[Math.floor(r() * CJK.length)] + (r() < 0.3 ? "\n" : "");
      return out;
    }
    case "mixed": {
      // Latin lines (logs, prose) naming things in Chinese, Japanese or
      // Korean: a share of their words CJK.
      const share = 0.05 + 0.5 * r();
      const latin = (r() < 0.5 ? logs : prose)(r, chars);
      return latin.replace(/[A-Za-z]+/g, (w) => {
        if (r() >= share) return w;
        const s = CJK[Math.floor(r() * CJK.length)];
        const at = Math.floor(r() * (s.length - 6));
        return s.slice(at, at + 2 + Math.floor(r() * 5));
      });
    }
    case "base64": {
      const bytes = Buffer.alloc(Math.floor((chars * 3) / 4));
      for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(r() * 256);
      return bytes.toString("base64");
    }
    case "minified": {
      let out = "";
      const id = () => "abcdefghijklmnopqrstuvwxyz"[Math.floor(r() * 26)] + (r() < 0.5 ? "" : Math.floor(r() * 10));
      while (out.length < chars) {
        const k = r();
        out +=
          k < 0.3
            ? `function ${id()}(${id()},${id()}){return ${id()}.${id()}(${id()})||${Math.floor(r() * 100)}}`
            : k < 0.6
              ? `var ${id()}=${id()}?${id()}[${Math.floor(r() * 10)}]:"${prose(r, 8).trim()}";`
              : k < 0.8
                ? `.${id()}{margin:${Math.floor(r() * 20)}px;color:#${Math.floor(r() * 0xffffff).toString(16).padStart(6, "0")}}`
                : `if(${id()}!==${id()}&&${id()}.length>${Math.floor(r() * 9)}){${id()}.push(${id()})}`;
      }
      return out.slice(0, chars);
    }
  }
  throw new Error(`no kind ${kind}`);
}

/** The page `read_artifact` answers for `text` from `offset` (src/tools/look_back.rs). */
function page(text, offset, length) {
  const end = Math.min(text.length, offset + length);
  return JSON.stringify({ handle: "9f".repeat(32), offset, bytes: end - offset, totalBytes: text.length, text: text.slice(offset, end), nextOffset: end < text.length ? end : null });
}

/** The corpus: `{ kind, source, text }`, deterministic. */
export function corpus() {
  const out = [];
  const r = rng(62);
  for (const kind of KINDS) {
    for (let i = 0; i < 50; i++) out.push({ kind, source: "generated", text: generated(kind, r, 200 + Math.floor(r() * 2300)) });
  }
  // The benches' tool outputs: the coding loop's (code, grep hits, listings)
  // and their read_artifact pages (JSON holding the text, escaped).
  for (let t = 1; t <= TURNS; t++) {
    const { tool, output } = turnPlan(t);
    out.push({ kind: tool === "list_dir" ? "logs" : "code", source: `coding_loop ${tool}`, text: output.slice(0, 2500) });
    out.push({ kind: "json", source: "read_artifact page", text: page(output, 2500 * (t % 3), 2500) });
  }
  // trace.mjs outputs paged too.
  for (let i = 0; i < 20; i++) {
    const text = [logs, jsonListing, source][i % 3](r, 6000);
    out.push({ kind: "json", source: "read_artifact page", text: page(text, 0, 2500) });
  }
  return out;
}

const o200k = new Tiktoken(o200kRanks);
const cl100k = new Tiktoken(cl100kRanks);

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

/** Every sample with its counts: generated, benches', and the real fixture's. */
export function measured() {
  const real = JSON.parse(readFileSync(REAL, "utf8")).samples.map((s, index) => ({ kind: s.category, source: "token_counts.json", index, text: s.text }));
  return [...corpus(), ...real].map((s) => ({ ...s, o200k: o200k.encode(s.text).length, cl100k: cl100k.encode(s.text).length, default: countTokens(s.text) }));
}

/** Per kind and tokenizer: samples, min, p1 and median of default / exact. */
export function ratioTable(samples) {
  const rows = [];
  for (const kind of KINDS) {
    const of = samples.filter((s) => s.kind === kind);
    for (const enc of ["o200k", "cl100k"]) {
      const ratios = of.map((s) => s.default / s[enc]);
      rows.push({ kind, tokenizer: enc, samples: of.length, min: Math.min(...ratios), p1: quantile(ratios, 0.01), median: quantile(ratios, 0.5), max: Math.max(...ratios) });
    }
  }
  return rows;
}

/** Prints the table (and writes the fixture with `write`). */
export function counterErrorBench({ write = false } = {}) {
  const samples = measured();
  console.log(`\ndefault counter / exact count, per kind (${samples.length} samples: generated, the benches' tool outputs and read_artifact pages, tests/fixtures/token_counts.json)`);
  console.log("  kind      tokenizer  n    min    p1     median  max");
  const pages = samples.filter((s) => s.source === "read_artifact page");
  for (const r of ratioTable(samples)) {
    console.log(`  ${r.kind.padEnd(9)} ${r.tokenizer.padEnd(10)} ${String(r.samples).padEnd(4)} ${r.min.toFixed(3)}  ${r.p1.toFixed(3)}  ${r.median.toFixed(3)}   ${r.max.toFixed(3)}`);
  }
  for (const enc of ["o200k", "cl100k"]) {
    const ratios = pages.map((s) => s.default / s[enc]);
    console.log(`  (of json: ${pages.length} read_artifact pages, ${enc}: min ${Math.min(...ratios).toFixed(3)}, p1 ${quantile(ratios, 0.01).toFixed(3)}, median ${quantile(ratios, 0.5).toFixed(3)})`);
  }
  if (write) {
    const fixture = {
      description: "bench/counter_error.mjs's corpus with its o200k_base and cl100k_base counts (js-tiktoken): tests/counter_margins.rs derives the default counter's content margins and usage bounds from it.",
      // The real samples' texts are token_counts.json's (by index).
      samples: samples.map(({ kind, source, index, text, o200k, cl100k }) => (index === undefined ? { kind, source, text, o200k, cl100k } : { kind, source, index, o200k, cl100k })),
    };
    writeFileSync(FIXTURE, JSON.stringify(fixture, null, 0) + "\n");
    console.log(`  wrote ${FIXTURE.pathname}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) counterErrorBench({ write: process.argv.includes("--write") });
