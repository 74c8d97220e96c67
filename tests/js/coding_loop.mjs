// The coding assistant the integrations' wire tests (and bench/integrations)
// run through each framework's own provider code: 30 turns, each asking
// about one file of a repository through one of three tools (`read_file`,
// `grep`, `list_dir`) whose outputs are 5 to 40 KB; turn 2 states a fact
// that turn 30 asks for; turn 3's output holds a secret. The model is a
// script over the captured HTTP requests (tests/js/wire): it calls the
// turn's tool, reads its output from the next request, pages through it
// with `read_artifact` when the request shows a handle instead, and
// answers. What each request held is measured as it goes.
import assert from "node:assert/strict";
import { ArtifactAttacher, Compactor, ContextCompiler, HistoryRecall, HistorySelector, MemoryArtifactStore, Session } from "agent-context-compiler";
import { loadTokenizer } from "agent-context-compiler/tokenizers";
import { toolCallsIn, toolResultsIn, counted, tokens } from "./wire/index.mjs";

/** The budget every model call is compiled under. */
export const BUDGET = 8000;
/** How many turns a loop runs. */
export const TURNS = 30;
/** The secret turn 3's output holds (an AWS key id and secret key line). */
export const SECRET = "Zq8vN2mLk4Rt7Wx1Yb3Hc6Jd9Fg0Ps5Ue2Ai7Ko";
/** The fact turn 2 states and turn 30 asks for. */
export const FACT = "pg-orca-17";
/** The system prompt. */
export const SYSTEM = "You are a coding assistant working in the repository of a small web service. Use the tools to read what you need before you answer; keep answers short.";

/**
 * What a request holds besides an output, at most: the system prompt and
 * the tools (about 800 tokens), the compaction summary (up to a tenth of
 * the budget), the question and the call, and the 5% margin held back once
 * usage is recorded. An output fits the budget when it fits with them.
 */
export const FIXED = 2100;

/**
 * A session counting with o200k (`sessionId`), the artifact store and the
 * README's recommended compiler over it (the attacher at 4 KB).
 */
export async function recommended(sessionId) {
  const counter = await loadTokenizer("o200k_base");
  const session = new Session({ sessionId, tokenCounter: counter });
  const store = new MemoryArtifactStore();
  const compiler = new ContextCompiler({
    layout: "zoned",
    processors: [new HistorySelector({ keepFirst: 1, keepLast: Infinity }), new ArtifactAttacher(store, { thresholdBytes: 4096 }), new Compactor(), new HistoryRecall({ artifactStore: store })],
  });
  return { session, store, compiler };
}

/** The three tools' names, by turn. */
const TOOL_OF = ["read_file", "grep", "list_dir"];
/** Each tool's argument, for turn `t`. */
const ARGS = {
  read_file: (t) => ({ path: `src/module_${t}.rs` }),
  grep: (t) => ({ pattern: `fn handler_${t}` }),
  list_dir: (t) => ({ path: `pkg/dir_${t}` }),
};

/** The tools' definitions, `{ name, description, parameters }` (JSON Schema). */
export const TOOL_SPECS = [
  { name: "read_file", description: "Reads a file of the repository", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"], additionalProperties: false } },
  { name: "grep", description: "Searches the repository for a pattern", parameters: { type: "object", properties: { pattern: { type: "string" } }, required: ["pattern"], additionalProperties: false } },
  { name: "list_dir", description: "Lists a directory of the repository, recursively", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"], additionalProperties: false } },
];

/** A small deterministic generator (mulberry32). */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// (Words a secret's name is made of, "token" or "session", are left out:
// the redaction takes `token = ...` in code for a secret.)
const WORDS = ["request", "handler", "config", "cache", "retry", "queue", "worker", "route", "store", "batch", "metric", "span", "limit", "backoff", "payload", "schema"];

/** About `bytes` bytes of source-like lines for turn `t` of `tool`, numbered. */
function output(tool, t, bytes) {
  const r = rng(t * 7919 + tool.length);
  const word = () => WORDS[Math.floor(r() * WORDS.length)];
  const lines = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line =
      tool === "read_file"
        ? `${String(i + 1).padStart(4)} | let ${word()}_${i} = ${word()}::${word()}(${Math.floor(r() * 1000)}); // ${word()} ${word()}`
        : tool === "grep"
          ? `src/${word()}/${word()}_${i % 40}.rs:${Math.floor(r() * 900) + 1}: fn handler_${t}_${i}(${word()}: &${word()}) -> Result<${word()}>`
          : `pkg/dir_${t}/${word()}/${word()}_${i}.${["rs", "toml", "md", "json"][i % 4]}  ${Math.floor(r() * 90000) + 100} bytes`;
    lines.push(line);
    size += line.length + 1;
  }
  if (t === 3) lines.splice(5, 0, `AWS_SECRET_ACCESS_KEY=${SECRET}`);
  return lines.join("\n");
}

/** Output sizes by turn, cycling: most fit the budget, some do not. */
const SIZES = [5, 9, 14, 40, 7, 18, 11, 32, 6, 22];

/** Turn `t`'s plan: its question, the tool the model calls, its arguments and output. */
export function turnPlan(t) {
  const tool = TOOL_OF[t % 3];
  const args = ARGS[tool](t);
  const subject = args.path ?? args.pattern;
  let question = `Turn ${t}: what does ${subject} tell us? Look before you answer.`;
  if (t === 2) question = `Turn 2: remember that the staging database is ${FACT}. What does ${subject} tell us?`;
  if (t === TURNS) question = `Turn ${t}: which staging database did I name in turn 2? Also check ${subject}.`;
  return { question, tool, args, output: output(tool, t, SIZES[t % SIZES.length] * 1000) };
}

/** The output of a call of `name` with `args` (what the framework's tool returns). */
export function runTool(name, args) {
  const t = Number(/(\d+)/.exec(args?.path ?? args?.pattern ?? "")?.[1]);
  const plan = Number.isInteger(t) && t >= 1 && t <= TURNS ? turnPlan(t) : null;
  if (plan === null || plan.tool !== name) throw new Error(`no such ${name} target: ${JSON.stringify(args)}`);
  return plan.output;
}

/** The user texts a request carries (any of the three APIs), each text part apart (Anthropic joins a turn's texts in one message), in order. */
export function userTexts({ api, body }) {
  const texts = (content) => (typeof content === "string" ? [content] : (content ?? []).filter((p) => ["text", "input_text"].includes(p?.type)).map((p) => p.text));
  const items = api === "openai-responses" ? (Array.isArray(body.input) ? body.input : [{ role: "user", content: body.input }]) : body.messages ?? [];
  return items.filter((m) => m.role === "user" && (m.type === undefined || m.type === "message")).flatMap((m) => texts(m.content)).filter((t) => t !== "");
}

/** The share of `output`'s lines that `shown` holds (a redacted line does not count). */
export function linesSeen(output, shown) {
  const lines = output.split("\n");
  return lines.filter((l) => shown.includes(l)).length / lines.length;
}

const HANDLE = /\[artifact ([0-9a-f]{64}) /;
/** The bytes the model asks `read_artifact` for at a time. */
const PAGE = 8192;

/**
 * The scripted coding assistant over captured requests: a `reply(request)`
 * for `scriptedApi`, and what it measured. Per turn it calls the turn's
 * tool (id `t<turn>_0`), then reads the newest result: the output whole,
 * or a handle it pages through with `read_artifact` (8 KB pages), then
 * answers (turn 30 naming the fact when its request holds it).
 * `measured.outputs[t]`: `{ tokens, seen }` (the share of the output's
 * lines the request after the call showed), `measured.paged[t]`: the pages'
 * text joined, `measured.requests`: per request `{ turn, questionPresent,
 * secret }`.
 */
export function codingModel({ idPrefix = "", reasoning = false } = {}) {
  const measured = { outputs: {}, paged: {}, requests: [], factRecalled: null };
  const reply = (request) => {
    const users = userTexts(request);
    const question = users.findLast((u) => /^Turn \d+:/.test(u));
    const turn = Number(/^Turn (\d+):/.exec(question ?? "")?.[1]);
    const plan = turnPlan(turn);
    measured.requests.push({ turn, questionPresent: users.some((u) => u.includes(plan.question)), secret: JSON.stringify(request.body).includes(SECRET) });
    const id = (k) => `${idPrefix}t${turn}_${k}`;
    // With `reasoning`, each call comes with the model's (signed) thinking.
    const think = (r) => (reasoning && r.toolCalls ? { ...r, reasoning: `Turn ${turn}: I should look at this before I answer.` } : r);
    const results = new Map(toolResultsIn(request).map((r) => [r.id, r.output]));
    let k = -1;
    while (results.has(id(k + 1))) k++;
    if (k < 0) return think({ toolCalls: [{ id: id(0), name: plan.tool, arguments: plan.args }] });
    const newest = results.get(id(k));
    if (k === 0) {
      measured.outputs[turn] = { tokens: tokens(plan.output), seen: linesSeen(plan.output, newest) };
      const handle = HANDLE.exec(newest)?.[1];
      if (handle !== undefined) return think({ toolCalls: [{ id: id(1), name: "read_artifact", arguments: { handle, offset: 0, length: PAGE } }] });
    } else {
      const smaller = /read it again with a length of at most (\d+)/.exec(newest);
      if (smaller !== null) {
        const asked = toolCallsIn(request).find((c) => c.id === id(k)).arguments;
        return think({ toolCalls: [{ id: id(k + 1), name: "read_artifact", arguments: { ...asked, length: Number(smaller[1]) } }] });
      }
      const page = JSON.parse(newest);
      measured.paged[turn] = (measured.paged[turn] ?? "") + page.text;
      if (page.nextOffset !== null) return think({ toolCalls: [{ id: id(k + 1), name: "read_artifact", arguments: { handle: page.handle, offset: page.nextOffset, length: PAGE } }] });
    }
    if (turn === TURNS) {
      measured.factRecalled = JSON.stringify(request.body).includes(FACT);
      return { text: `Turn ${turn}: the staging database is ${measured.factRecalled ? FACT : "unknown"}.` };
    }
    return { text: `Turn ${turn}: done.` };
  };
  return { reply, measured };
}

/**
 * The checks every captured request of a loop passes, as a list of
 * failures (empty when all hold): within `budget` counted with o200k, every
 * call answered by its result and every result by its call, no secret, and
 * what `check(request)` adds (the format's own rules, fields).
 */
export function requestProblems(requests, { budget = BUDGET, check = () => [] } = {}) {
  const problems = [];
  requests.forEach((r, i) => {
    const total = counted(r).total;
    if (total > budget) problems.push(`request ${i}: ${total} o200k tokens > ${budget}`);
    const calls = toolCallsIn(r).map((c) => c.id);
    const results = toolResultsIn(r).map((c) => c.id);
    for (const c of calls) if (!results.includes(c)) problems.push(`request ${i}: call ${c} without its result`);
    for (const c of results) if (!calls.includes(c)) problems.push(`request ${i}: result ${c} without its call`);
    if (r.bodyText.includes(SECRET)) problems.push(`request ${i}: the secret`);
    for (const p of check(r)) problems.push(`request ${i}: ${typeof p === "string" ? p : JSON.stringify(p)}`);
  });
  return problems;
}

/**
 * What a loop measured, summarised: the share of outputs that fit the
 * budget seen whole (≥ 95% of their lines) in the next request, whether
 * every output that did not fit was read whole in pages, the questions
 * present.
 */
export function outcome(measured, { fits = (t) => t + FIXED <= BUDGET } = {}) {
  const turns = Object.keys(measured.outputs).map(Number);
  const fitting = turns.filter((t) => fits(measured.outputs[t].tokens));
  const seenWhole = fitting.filter((t) => measured.outputs[t].seen >= 0.95);
  const big = turns.filter((t) => !fits(measured.outputs[t].tokens) && measured.outputs[t].seen < 0.95);
  const pagedWhole = big.filter((t) => linesSeen(turnPlan(t).output, measured.paged[t] ?? "") >= 0.99);
  return {
    turns: turns.length,
    fitting: fitting.length,
    seenWhole: seenWhole.length,
    notSeen: fitting.filter((t) => !seenWhole.includes(t)),
    big: big.length,
    pagedWhole: pagedWhole.length,
    questionsPresent: measured.requests.every((r) => r.questionPresent),
    factRecalled: measured.factRecalled,
  };
}

/**
 * The checks every integration's loop passes, asserted: each captured
 * request holds what `requestProblems` checks (with the format's own
 * `check`), its turn's question, and the model read what it asked for:
 * every output that fits the budget whole in the next request, every other
 * one whole in pages, turn 2's fact at turn 30.
 */
export function assertReadsWhatItAskedFor(requests, measured, check) {
  assert.deepEqual(requestProblems(requests, { check }), []);
  const o = outcome(measured);
  assert.ok(o.questionsPresent, "every request holds its turn's question");
  assert.ok(o.fitting >= 15 && o.big >= 5, JSON.stringify(o));
  assert.equal(o.seenWhole, o.fitting, `outputs that fit, seen whole in the next request: ${JSON.stringify(o)}`);
  assert.equal(o.pagedWhole, o.big, "outputs too big for the budget read whole in pages");
  assert.equal(o.factRecalled, true, "turn 2's fact reaches turn 30");
}
