// The agent UI (www/) in real headless Chromium: built with Vite as
// `npm run www` builds it, served on 127.0.0.1, driven with the keyboard
// and the mouse: a scripted conversation with tool calls end to end (a large
// output externalised to IndexedDB, a secret redacted, a failure, a timeout),
// the compiled context's zones, an artifact opened and verified, a reload
// that resumes the session, a tool that asks first (approved, rejected with a
// reason, edited, and a pause kept across a reload), no console errors, and
// axe-core's checks.
// With WWW_SCREENSHOTS=<dir> it also saves the README's screenshots there.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { launchChromium } from "../browser/chromium.mjs";
import { startServer } from "../browser/server.mjs";

const root = new URL("../..", import.meta.url).pathname;
const shots = process.env.WWW_SCREENSHOTS;
let server;
let browser;
let context;
let page;
const errors = [];

function watch(p) {
  p.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  p.on("console", (m) => m.type() === "error" && errors.push(`console: ${m.text()}`));
  p.on("response", (r) => r.status() >= 400 && errors.push(`${r.status()} ${r.url()}`));
}

async function open() {
  await page.goto(`${server.origin}/`);
  await page.waitForSelector("body[data-ready=true]", { timeout: 30_000 });
}

/** Types `text` into the composer with the keyboard and waits for the run to end. */
async function say(text) {
  const before = await page.locator("#conversation .turn.assistant").count();
  await page.focus("#input");
  await page.keyboard.type(text);
  await page.keyboard.press("Enter");
  await page.waitForFunction((n) => document.querySelectorAll("#conversation .turn.assistant").length > n, before, { timeout: 30_000 });
}

/** Types `text` (a message whose tool call needs approval) and waits for the run to pause. */
async function sayAndPause(text) {
  await page.focus("#input");
  await page.keyboard.type(text);
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => /^Waiting for your approval/.test(document.querySelector("#status").textContent), null, { timeout: 30_000 });
}

/** Waits for the run a decision resumed to end with one more answer than `answers`. */
async function answered(answers) {
  await page.waitForFunction((n) => document.querySelectorAll("#conversation .turn.assistant").length > n, answers, { timeout: 30_000 });
}

/** The messages of the last model call, as the context panel lists them. */
async function lastRequest() {
  return (await page.locator("#messages .message pre").allTextContents()).map((text) => JSON.parse(text));
}

/** axe-core's violations on the page as it is (injected once per page load). */
async function axeViolations() {
  if (!(await page.evaluate(() => "axe" in globalThis))) {
    await page.addScriptTag({ content: readFileSync(join(root, "node_modules/axe-core/axe.min.js"), "utf8") });
  }
  const result = await page.evaluate(async () => await globalThis.axe.run(document, { resultTypes: ["violations"] }));
  return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

async function screenshot(name) {
  if (!shots) return;
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: join(shots, `${name}.png`) });
}

before(async () => {
  execFileSync(join(root, "node_modules/.bin/vite"), ["build", "--config", "www/vite.config.js"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  server = await startServer(join(root, "target/www"));
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
  page = await context.newPage();
  watch(page);
  await open();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test("a large fetched output is a success row linked to its artifact, and the context shows four zones within the budget", async () => {
  await say("fetch /sample/build.log");
  const row = page.locator("#conversation .tool").last();
  assert.match(await row.locator(".outcome").textContent(), /^success · \d+ ms$/);
  assert.match(await row.locator(".tool-name").textContent(), /^fetch_url\(\{"url":"\/sample\/build.log"\}\)$/);
  assert.match(await row.locator("button.link").textContent(), /^artifact [0-9a-f]{12}… \(27326 bytes\)$/);
  assert.match(await page.locator("#conversation .turn.assistant").last().textContent(), /stored as artifact [0-9a-f]{12}/);
  const used = await page.locator("#context-tokens").textContent();
  const [, tokens, budget] = used.match(/^(\d+) of (\d+) tokens$/);
  assert.ok(Number(tokens) <= Number(budget) && Number(tokens) > 0, used);
  assert.equal(await page.locator("#zonebar .zone").count(), 4);
  const legend = await page.locator("#zone-legend li").allTextContents();
  assert.deepEqual(legend.map((l) => l.split(":")[0]), ["system", "persistent", "working", "recent"]);
  assert.equal(legend.reduce((n, l) => n + Number(l.split(": ")[1]), 0), Number(tokens), "the zones add up to the tokens sent");
  assert.match(await page.locator("#cache-prefix").textContent(), /^Prompt-cache prefix: the first [1-9]\d* of \d+ messages \(\d+ tokens\) repeat/);
  assert.match(
    await page.locator("#cache-miss").textContent(),
    /^(The whole previous context is still the prefix\.|Changed at message \d+ \((SYSTEM|PERSISTENT|WORKING|RECENT)\): [a-z]+, .+\.)$/,
  );
  // The ledger: each zone's parts add up to the zone, the zones to the tokens sent.
  const zones = await page.locator("#ledger .ledger-zone > .key").allTextContents();
  assert.deepEqual(zones.map((z) => Number(z.match(/: (\d+) tokens/)[1])), legend.map((l) => Number(l.split(": ")[1])));
  // The externalised output is a part; picking it shows its event and why.
  await page.locator("#ledger button.part.externalised").first().click();
  assert.match(await page.locator("#ledger-detail .part-why").textContent(), /^externalised: a tool output sent as its artifact's handle and summary · \d+ tokens in (WORKING|RECENT) · 1 event$/);
  assert.match(await page.locator("#ledger-detail .part-events").textContent(), /^tool_success: /);
  await page.locator("#ledger button.part.system").first().click();
  assert.match(await page.locator("#ledger-detail").textContent(), /No session event stands behind it/);
  assert.equal(await page.locator("#artifacts tr").count(), 1);
  await screenshot("conversation");
});

test("a secret in a tool output is redacted: the rule and line are shown, never the secret", async () => {
  await say("read config.env");
  const row = page.locator("#conversation .tool").last();
  assert.match(await row.locator(".outcome").textContent(), /^success/);
  const redactions = await row.locator(".redactions").textContent();
  assert.match(redactions, /^3 redacted: /);
  assert.match(redactions, /aws-access-key-id \(line 3\)/);
  assert.match(redactions, /github-token \(line 5\)/);
  assert.equal(await row.locator("mark.redaction").count(), 3);
  const html = await page.content();
  for (const secret of ["AKIAZ7Q2XJ4LMN5PQR3T", "wJalrXUtnFEMI", "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"]) {
    assert.ok(!html.includes(secret), `the page never shows ${secret.slice(0, 6)}…`);
  }
  assert.match(await page.locator("#conversation .turn.assistant").last().textContent(), /3 secrets were redacted/);
});

test("a failing tool is an error row and a slow one a timeout row; the agent answers after both", async () => {
  await say("use the broken tool and run the slow tool");
  const rows = page.locator("#conversation .tool");
  const n = await rows.count();
  const outcomes = [await rows.nth(n - 2).getAttribute("class"), await rows.nth(n - 1).getAttribute("class")].sort();
  assert.deepEqual(outcomes, ["tool error", "tool timeout"]);
  const timeout = page.locator("#conversation .tool.timeout").last();
  assert.match(await timeout.locator(".outcome").textContent(), /^timeout · \d+ ms$/);
  assert.match(await timeout.locator(".output").textContent(), /timed out after 1500 ms/);
  assert.match(await page.locator("#conversation .tool.error").last().locator(".output").textContent(), /the broken tool failed/);
});

test("an artifact opens from the keyboard and verifies against its id", async () => {
  const open = page.locator("#artifacts button", { hasText: "Open" }).first();
  await open.focus();
  await page.keyboard.press("Enter");
  const dialog = page.locator("#artifact-dialog");
  await dialog.waitFor({ state: "visible" });
  assert.match(await page.locator("#artifact-meta").textContent(), /^27326 bytes, SHA-256 [0-9a-f]{64}; read back verified\.$/);
  assert.match(await page.locator("#artifact-content").textContent(), /error: linking failed: out of memory \(job 42\)/);
  await screenshot("artifact");
  await page.keyboard.press("Escape");
  await dialog.waitFor({ state: "hidden" });
  await page.locator("#artifacts button", { hasText: "Verify" }).first().click();
  await page.waitForFunction(() => document.querySelector("#artifacts .verdict")?.textContent !== "");
  assert.equal(await page.locator("#artifacts .verdict").first().textContent(), "verified: content matches its id");
});

test("after a reload the session resumes from IndexedDB with its conversation", async () => {
  const before = await page.locator("#conversation > li").allTextContents();
  const id = (await page.locator("#sessions .current .session-id").textContent()).replace(" (open)", "");
  await page.reload();
  await page.waitForSelector("body[data-ready=true]", { timeout: 30_000 });
  assert.match(await page.locator("#status").textContent(), new RegExp(`^Resumed session ${id} \\(\\d+ events\\)\\.$`));
  assert.deepEqual(await page.locator("#conversation > li").allTextContents(), before);
  await say("read config.env");
  assert.equal(await page.locator("#conversation .turn.user").count(), 4);
  await page.click("#new-session");
  assert.equal(await page.locator("#conversation > li").count(), 0);
  await page.locator("#sessions button", { hasText: "Resume" }).first().click();
  await page.waitForFunction(() => document.querySelectorAll("#conversation .turn.user").length === 4);
  await screenshot("context");
});

test("the answer streams: the page shows it growing before the run ends", async () => {
  const before = await page.locator("#conversation .turn.assistant").count();
  await page.focus("#input");
  await page.keyboard.type("hello");
  await page.keyboard.press("Enter");
  // Part of the answer is on the page while the run still holds the composer.
  await page.waitForFunction(() => {
    const live = document.querySelector("#live");
    return !live.hidden && live.textContent.length > 0 && document.querySelector("#send").disabled;
  }, null, { timeout: 30_000 });
  const partial = await page.locator("#live").textContent();
  await page.waitForFunction((n) => document.querySelectorAll("#conversation .turn.assistant").length > n, before, { timeout: 30_000 });
  const answer = await page.locator("#conversation .turn.assistant").last().textContent();
  assert.ok(answer.includes(partial.trim()), `the final answer holds what streamed first (${partial})`);
  assert.match(answer, /I can fetch a URL/);
  assert.equal(await page.locator("#live").isHidden(), true);
});

/** A fake OpenAI-compatible endpoint: asks for read_file once, then answers; records the requests. */
function fakeEndpoint() {
  const requests = [];
  const server = createServer(async (req, res) => {
    const cors = { "access-control-allow-origin": "*", "access-control-allow-headers": "authorization, content-type" };
    if (req.method === "OPTIONS") return res.writeHead(204, cors).end();
    let body = "";
    for await (const chunk of req) body += chunk;
    const request = JSON.parse(body);
    requests.push({ url: req.url, authorization: req.headers.authorization, request });
    const askedAlready = request.messages.at(-1).role === "tool";
    // Chat Completions stream chunks, as the page asks for them.
    const chunks = askedAlready
      ? [{ choices: [{ index: 0, delta: { role: "assistant", content: "The endpoint " } }] }, { choices: [{ index: 0, delta: { content: "read the file." }, finish_reason: "stop" }] }]
      : [
          { choices: [{ index: 0, delta: { role: "assistant", content: null, tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "read_file", arguments: "" } }] } }] },
          { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"name":"config.env"}' } }] }, finish_reason: "tool_calls" }] },
        ];
    chunks.push({ choices: [], usage: { prompt_tokens: 100, completion_tokens: 5 } });
    res.writeHead(200, { ...cors, "content-type": "text/event-stream" });
    res.end(chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n");
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ requests, url: `http://127.0.0.1:${server.address().port}/v1`, close: () => server.close() })));
}

test("an OpenAI-compatible endpoint typed into the settings gets the compiled messages and the tools", async () => {
  const endpoint = await fakeEndpoint();
  try {
    await page.check('input[name="model"][value="openai"]');
    await page.fill("#endpoint-url", endpoint.url);
    await page.fill("#endpoint-key", "sk-test-key");
    await page.fill("#endpoint-model", "test-model");
    await say("please check the config");
    assert.equal(await page.locator("#conversation .turn.assistant").last().textContent(), "AgentThe endpoint read the file.");
    assert.equal(endpoint.requests.length, 2);
    const [first, second] = endpoint.requests;
    assert.equal(first.url, "/v1/chat/completions");
    assert.equal(first.authorization, "Bearer sk-test-key");
    assert.equal(first.request.model, "test-model");
    assert.equal(first.request.stream, true);
    assert.deepEqual(first.request.tools.map((t) => t.function.name), ["fetch_url", "read_file", "write_file", "slow_tool", "broken_tool", "search_history", "read_artifact"]);
    assert.equal(first.request.messages[0].role, "system");
    assert.equal(first.request.messages.at(-1).content, "please check the config");
    // The call comes back paired with its result (under the session's own call id).
    const [call, tool] = second.request.messages.slice(-2);
    assert.equal(call.tool_calls[0].function.name, "read_file");
    assert.equal(tool.tool_call_id, call.tool_calls[0].id);
    assert.match(tool.content, /\[REDACTED:aws-access-key-id\]/, "the endpoint gets the redacted output");
    assert.ok(!JSON.stringify(second.request).includes("AKIAZ7Q2XJ4LMN5PQR3T"), "never the secret");
  } finally {
    await page.check('input[name="model"][value="scripted"]');
    endpoint.close();
  }
});

test("under a small budget the page lists what was left out, and the cache bar says what broke the prefix", async () => {
  // A new session: the last one's usage, reported by the fake endpoint,
  // corrects its counts.
  await page.click("#new-session");
  for (const text of ["fetch /sample/build.log", "read config.env", "hello"]) await say(text);
  // A smaller budget (the tools alone take over 500 tokens): the window
  // moves up, and the prefix breaks where it starts.
  await page.fill("#budget", "780");
  await say("hello");
  assert.match(await page.locator("#cache-miss").textContent(), /^Changed at message \d+ \((PERSISTENT|WORKING|RECENT)\): (compaction|window|history), .+\.$/);
  const left = await page.locator("#excluded button").allTextContents();
  assert.ok(left.length > 0, "something was left out");
  for (const entry of left) assert.match(entry, /^(budget|compacted|masked|window) · \d+ events? · \d+ tokens$/);
  // The turns the selection never reached are one entry, counted; the rest list their events.
  for (const [i, entry] of left.entries()) {
    await page.locator("#excluded button").nth(i).click();
    assert.match(await page.locator("#ledger-detail .part-why").textContent(), new RegExp(`^${entry.split(" ")[0]}: `));
    if (entry.startsWith("window")) assert.match(await page.locator("#ledger-detail").textContent(), /Counted, not listed/);
    else assert.ok((await page.locator("#ledger-detail .part-events li").count()) > 0, `${entry}: its events are listed`);
  }
  assert.match(await page.locator("#cache-prefix").textContent(), /^Prompt-cache prefix: the first [1-9]\d* of \d+ messages/);
  const [, tokens] = (await page.locator("#context-tokens").textContent()).match(/^(\d+) of 780 tokens$/);
  assert.ok(Number(tokens) <= 780);
  // The summary names the turns it folded.
  await page.locator("#ledger button.part.summary").click();
  assert.match(await page.locator("#ledger-detail .part-why").textContent(), /^summary: the compaction summary of the turns it folded · \d+ tokens in WORKING · [1-9]\d* events?$/);
  assert.ok((await page.locator("#ledger-detail .part-events li").count()) > 0);
  await screenshot("inside");
  await page.fill("#budget", "3000");
});

test("a tool marked needsApproval pauses the run; approved, it runs and the agent answers", async () => {
  await page.click("#new-session");
  await sayAndPause("write notes.txt first draft");
  const call = page.locator("#pending .pending-call");
  assert.equal(await call.count(), 1);
  assert.equal(await call.locator(".tool-name").textContent(), "write_file wants to run with:");
  assert.deepEqual(JSON.parse(await call.locator(".arguments").textContent()), { name: "notes.txt", text: "first draft" });
  // The keyboard is on the question; the call has not run.
  assert.equal(await page.evaluate(() => document.activeElement.id), "approvals-title");
  assert.equal(await page.locator("#conversation .tool").last().locator(".outcome").textContent(), "waiting for approval");
  assert.equal(await page.locator("#conversation .turn.assistant").count(), 0);
  assert.doesNotMatch(await page.locator("#file-list").textContent(), /notes\.txt/);
  await page.keyboard.press("Tab"); // the arguments, scrollable from the keyboard
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute("aria-label")), "Approve write_file");
  await page.keyboard.press("Enter");
  await answered(0);
  assert.equal(await page.locator("#approvals").isHidden(), true);
  const row = page.locator("#conversation .tool").last();
  assert.match(await row.locator(".outcome").textContent(), /^success · \d+ ms$/);
  assert.equal(await row.locator(".output").textContent(), "wrote 11 characters to notes.txt");
  assert.match(await page.locator("#conversation .turn.assistant").last().textContent(), /Done: wrote 11 characters to notes\.txt\./);
  assert.match(await page.locator("#file-list").textContent(), /notes\.txt/);
  assert.match(await page.locator("#status").textContent(), /^Answered in 1 model call; \d+ of 3000 tokens\.$/);
  assert.equal(await page.evaluate(() => document.activeElement.id), "input");
});

test("a call rejected with a reason does not run, and the model's next request has the rejection as its outcome", async () => {
  const secret = "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R";
  await sayAndPause(`write creds.env GITHUB_TOKEN=${secret}`);
  const call = page.locator("#pending .pending-call");
  // The arguments are shown redacted, as the session holds them (the
  // message typed is the user's own, shown as typed).
  assert.equal(await call.locator(".arguments mark.redaction").textContent(), "[REDACTED:github-token]");
  assert.ok(!(await call.textContent()).includes(secret), "the pending call never shows the secret");
  assert.ok(!(await call.locator("textarea").inputValue()).includes(secret), "nor does its edit field");
  await page.getByLabel("Reason for rejecting write_file (the model gets it)").focus();
  await page.keyboard.type("no secrets on the shelf");
  await page.keyboard.press("Enter");
  await answered(1);
  const row = page.locator("#conversation .tool").last();
  assert.equal(await row.getAttribute("class"), "tool rejected");
  assert.equal(await row.locator(".outcome").textContent(), "rejected");
  assert.equal(await row.locator(".decision").textContent(), "Rejected: no secrets on the shelf");
  const outcome = (await lastRequest()).at(-1);
  assert.equal(outcome.role, "tool");
  assert.match(outcome.content, /rejected/i);
  assert.match(outcome.content, /no secrets on the shelf/);
  const [call_] = (await lastRequest()).at(-2).tool_calls;
  assert.equal(outcome.tool_call_id, call_.id, "the rejection answers the call");
  assert.match(await page.locator("#conversation .turn.assistant").last().textContent(), /You rejected the call: .*no secrets on the shelf/);
  assert.doesNotMatch(await page.locator("#file-list").textContent(), /creds\.env/);
});

test("an edit is checked as JSON before it is sent; the tool runs with the edited arguments", async () => {
  await sayAndPause("write plan.md step one");
  const call = page.locator("#pending .pending-call");
  const open = call.locator("button.open-edit");
  await open.focus();
  await page.keyboard.press("Enter");
  assert.equal(await open.getAttribute("aria-expanded"), "true");
  const args = page.getByLabel("Arguments of write_file (JSON)");
  assert.equal(await page.evaluate(() => document.activeElement.id), await args.getAttribute("id"));
  assert.deepEqual(JSON.parse(await args.inputValue()), { name: "plan.md", text: "step one" });
  const events = await page.evaluate(() => document.querySelectorAll("#conversation > li").length);
  for (const [typed, error] of [["{not json", /^Not valid JSON: /], ["[1, 2]", /^The arguments must be a JSON object/]]) {
    await args.fill(typed);
    await call.getByRole("button", { name: "Run with these arguments: write_file" }).click();
    assert.match(await call.locator(".field-error").textContent(), error);
    assert.equal(await args.getAttribute("aria-invalid"), "true");
    assert.equal(await page.evaluate(() => document.activeElement.tagName), "TEXTAREA");
  }
  // Nothing was sent: the call still waits, the run did not resume.
  assert.match(await page.locator("#status").textContent(), /^Waiting for your approval: 1 call\.$/);
  assert.equal(await page.evaluate(() => document.querySelectorAll("#conversation > li").length), events);
  assert.equal(await page.locator("#conversation .tool").last().locator(".outcome").textContent(), "waiting for approval");
  await args.fill('{"name": "plan.md", "text": "step two"}');
  await call.getByRole("button", { name: "Run with these arguments: write_file" }).click();
  await answered(2);
  const row = page.locator("#conversation .tool").last();
  assert.equal(await row.locator(".tool-name").textContent(), 'write_file({"name":"plan.md","text":"step two"})');
  assert.match(await row.locator(".outcome").textContent(), /^success · \d+ ms$/);
  assert.equal(await row.locator(".output").textContent(), "wrote 8 characters to plan.md");
  assert.equal(await row.locator(".decision").textContent(), 'Edited before it ran; asked for {"name":"plan.md","text":"step one"}.');
  // The request after it carries the call as it ran.
  const sent = (await lastRequest()).findLast((m) => m.tool_calls?.some((c) => c.function.name === "write_file"));
  assert.deepEqual(JSON.parse(sent.tool_calls[0].function.arguments), { name: "plan.md", text: "step two" });
  // The tool wrote the edited text.
  await say("read plan.md");
  assert.equal(await page.locator("#conversation .tool").last().locator(".output").textContent(), "step two");
});

test("a reload keeps the pause (the session is in IndexedDB), axe finds nothing on the pending view, and a decision then resumes", async () => {
  await sayAndPause("write todo.txt buy milk");
  const id = (await page.locator("#sessions .current .session-id").textContent()).replace(" (open)", "");
  const conversation = await page.locator("#conversation > li").allTextContents();
  await page.reload();
  await page.waitForSelector("body[data-ready=true]", { timeout: 30_000 });
  assert.match(await page.locator("#status").textContent(), new RegExp(`^Resumed session ${id} \\(\\d+ events\\)\\. 1 call waits for your approval\\.$`));
  assert.deepEqual(await page.locator("#conversation > li").allTextContents(), conversation);
  const call = page.locator("#pending .pending-call");
  assert.equal(await call.count(), 1);
  assert.deepEqual(JSON.parse(await call.locator(".arguments").textContent()), { name: "todo.txt", text: "buy milk" });
  // A new message waits for the decision.
  await page.focus("#input");
  await page.keyboard.type("hello");
  await page.keyboard.press("Enter");
  assert.equal(await page.locator("#status").textContent(), "Decide the calls waiting for your approval first.");
  assert.equal(await page.evaluate(() => document.activeElement.id), "approvals-title");
  assert.deepEqual(await page.locator("#conversation > li").allTextContents(), conversation);
  await page.fill("#input", "");
  // The pending view, its edit form open and showing an error, is accessible.
  await call.locator("button.open-edit").click();
  await page.getByLabel("Arguments of write_file (JSON)").fill("{");
  await call.getByRole("button", { name: "Run with these arguments: write_file" }).click();
  await screenshot("approval");
  assert.deepEqual(await axeViolations(), []);
  await call.locator("button.approve").click();
  await answered(conversation.filter((t) => t.startsWith("Agent")).length);
  assert.equal(await page.locator("#approvals").isHidden(), true);
  assert.equal(await page.locator("#conversation .tool").last().locator(".output").textContent(), "wrote 8 characters to todo.txt");
  assert.match(await page.locator("#conversation .turn.assistant").last().textContent(), /Done: wrote 8 characters to todo\.txt\./);
  await page.reload();
  await page.waitForSelector("body[data-ready=true]", { timeout: 30_000 });
  assert.match(await page.locator("#status").textContent(), /^Resumed session \S+ \(\d+ events\)\.$/);
  assert.equal(await page.locator("#approvals").isHidden(), true);
  await say("hello");
});

test("two tabs on one paused session: the first decision stands, and the other tab's later one neither records nor runs", async () => {
  await sayAndPause("write shared.txt from two tabs");
  const other = await context.newPage();
  watch(other);
  try {
    await other.goto(`${server.origin}/`);
    await other.waitForSelector("body[data-ready=true]", { timeout: 30_000 });
    assert.equal(await other.locator("#pending .pending-call").count(), 1, "the other tab shows the pause too");
    const answers = await page.locator("#conversation .turn.assistant").count();
    await page.locator("#pending button.approve").click();
    await answered(answers);
    // The other tab still shows the call; its rejection comes second.
    await other.getByLabel("Reason for rejecting write_file (the model gets it)").fill("not from this tab");
    await other.getByRole("button", { name: "Reject write_file" }).click();
    await other.waitForFunction(() => /^That call was decided elsewhere/.test(document.querySelector("#status").textContent), null, { timeout: 30_000 });
    assert.equal(await other.locator("#approvals").isHidden(), true);
    const row = other.locator("#conversation .tool").last();
    assert.match(await row.locator(".outcome").textContent(), /^success · \d+ ms$/);
    assert.equal(await row.locator(".output").textContent(), "wrote 13 characters to shared.txt");
    // Saved once, decided once: a reload of either tab shows one outcome and no rejection.
    await page.reload();
    await page.waitForSelector("body[data-ready=true]", { timeout: 30_000 });
    assert.equal(await page.locator("#conversation .tool", { hasText: "shared.txt" }).count(), 1);
    assert.equal(await page.locator("#conversation .tool.rejected", { hasText: "shared.txt" }).count(), 0);
    assert.equal(await page.locator("#conversation .turn.assistant").count(), answers + 1);
  } finally {
    await other.close();
  }
  await say("hello");
});

test("axe-core finds no accessibility violations, and nothing went to the console", async () => {
  await page.locator("#context-view details summary").click();
  assert.deepEqual(await axeViolations(), []);
  assert.deepEqual(errors, []);
});
