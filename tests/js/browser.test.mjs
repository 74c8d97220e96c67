// Browser tests in real headless Chromium (Debian's, driven by playwright-core):
// the store conformance suite against IndexedDB in a page and in a web worker
// (plus the memory and KV stores in the browser), and IndexedDB's faults:
// quota, blocked upgrade, deleted/closed database, hostile records, durability,
// a session surviving a page reload, and two tabs syncing one session.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { BEHAVIOURS } from "../conformance/store_suite.mjs";
import { launchChromium } from "../browser/chromium.mjs";
import { startServer } from "../browser/server.mjs";

let server;
let browser;
let page;

async function openHarness(context) {
  const p = await context.newPage();
  const errors = [];
  p.on("pageerror", (e) => errors.push(e.message));
  await p.goto(`${server.origin}/tests/browser/harness.html`);
  await p.waitForFunction(() => globalThis.harnessReady === true, null, { timeout: 30_000 }).catch((e) => {
    throw new Error(`the harness did not load: ${errors.join("; ") || e.message}`);
  });
  return p;
}

before(async () => {
  server = await startServer();
  browser = await launchChromium();
  page = await openHarness(await browser.newContext());
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test("two stores over one IndexedDB: a stale save rejects whole, racing saves keep every event", async () => {
  const out = await page.evaluate(() => globalThis.harness.twoWriters());
  assert.equal(out.error, undefined, out.error);
  assert.deepEqual(out.stale, ["first", "from a"]);
  assert.equal(out.acked, 20);
  assert.ok(out.conflicts > 0, "the writers raced");
});

test("two tabs syncing one session through one IndexedDB keep every turn once, in one order", async () => {
  const other = await openHarness(page.context());
  try {
    const name = `tabs-${Date.now()}`;
    const [a, b] = await Promise.all([
      page.evaluate(([n]) => globalThis.harness.syncingTab(n, "a", 15), [name]),
      other.evaluate(([n]) => globalThis.harness.syncingTab(n, "b", 15), [name]),
    ]);
    assert.equal(a.error, undefined, a.error);
    assert.equal(b.error, undefined, b.error);
    const seen = await page.evaluate(([n]) => globalThis.harness.syncedLog(n), [name]);
    const fromOther = await other.evaluate(([n]) => globalThis.harness.syncedLog(n), [name]);
    assert.deepEqual([...seen.texts].sort(), [...a.acked, ...b.acked].sort(), "each acknowledged turn once");
    assert.ok(seen.paired, "each turn's input and reply stay together");
    assert.deepEqual(fromOther.ids, seen.ids, "both tabs read one order");
  } finally {
    await other.close();
  }
});

async function checkSuite(t, results) {
  assert.deepEqual(results.map((r) => r.name), BEHAVIOURS);
  for (const r of results) await t.test(r.name, () => assert.ok(r.ok, r.error));
}

test("the persistent stores are a module of their own, fetched only when init names them; they keep main-module sessions and artifacts", async () => {
  const p = await openHarness(await browser.newContext());
  const out = await p.evaluate(() => globalThis.harness.stores());
  await p.close();
  assert.ok(!out.before.includes("context_compiler_stores_bg.wasm"), `fetched before init named "stores": ${out.before}`);
  assert.equal(out.beforeInit?.code, "NOT_INITIALIZED");
  assert.match(out.beforeInit.message, /init\(\{ modules: \["stores"\] \}\)/);
  assert.ok(out.after.includes("context_compiler_stores_bg.wasm"), `not fetched by init({ modules: ["stores"] }): ${out.after}`);
  assert.deepEqual(out.report, { eventsWritten: 1, rewritten: true });
  assert.equal(out.loadedEvents, 1, "the loaded session has the saved event");
  assert.equal(out.loadedIsSession, true, "a loaded session is a main-module Session");
  assert.match(out.handleId, /^[0-9a-f]{64}$/);
  assert.ok(out.attachedBytes > 2000, "the attacher stored the large result in the IndexedDB store");
});

test("store conformance in Chromium: IndexedDB in a page", async (t) => {
  await checkSuite(t, await page.evaluate(() => globalThis.harness.suite("indexeddb")));
});

test("store conformance in Chromium: IndexedDB in a web worker", async (t) => {
  const out = await page.evaluate(() => globalThis.harness.workerSuite());
  assert.equal(out.isWorker, true);
  await checkSuite(t, out.indexeddb);
});

test("store conformance in Chromium: memory and KV stores", async (t) => {
  await checkSuite(t, await page.evaluate(() => globalThis.harness.suite("memory")));
  await checkSuite(t, await page.evaluate(() => globalThis.harness.suite("kv")));
});

test("a write over the quota is STORE_QUOTA_EXCEEDED and leaves nothing half-written", async () => {
  const context = await browser.newContext();
  const p = await openHarness(context);
  const cdp = await context.newCDPSession(p);
  await cdp.send("Storage.overrideQuotaForOrigin", { origin: server.origin, quotaSize: 4 << 20 });
  const out = await p.evaluate((n) => globalThis.harness.quota(n), 12 << 20);
  await context.close();
  assert.deepEqual(out, {
    code: "STORE_QUOTA_EXCEEDED",
    existsAfter: false,
    listedAfter: 0,
    smallBack: "still works",
    sessionCode: "STORE_QUOTA_EXCEEDED",
    savedEventsAfterFailure: 40,
  });
});

test("an upgrade blocked by another connection is STORE_BLOCKED, and opening works once it closes", async () => {
  assert.deepEqual(await page.evaluate(() => globalThis.harness.blocked()), { code: "STORE_BLOCKED", ok: true });
});

test("a deleted or closed database is STORE_CLOSED", async () => {
  assert.deepEqual(await page.evaluate(() => globalThis.harness.closed()), {
    afterDelete: "STORE_CLOSED",
    listAfterDelete: "STORE_CLOSED",
    afterClose: "STORE_CLOSED",
  });
});

test("records altered into the wrong shape are STORE_CORRUPT", async () => {
  assert.deepEqual(await page.evaluate(() => globalThis.harness.hostileRecord()), {
    retrieve: "STORE_CORRUPT",
    list: "STORE_CORRUPT",
  });
});

test("durability \"strict\" writes round-trip; an unknown durability is refused", async () => {
  assert.deepEqual(await page.evaluate(() => globalThis.harness.strict()), {
    back: "durable",
    report: { eventsWritten: 1, rewritten: true },
    bad: "INVALID_ARGUMENT",
  });
});

test("JSON Schema validation is a second module, fetched only when init names it", async () => {
  const context = await browser.newContext();
  const p = await openHarness(context);
  const out = await p.evaluate(() => globalThis.harness.schemas());
  await context.close();
  assert.deepEqual(out.before, ["context_compiler_bg.wasm"]);
  assert.equal(out.beforeInit?.code, "NOT_INITIALIZED");
  assert.match(out.beforeInit.message, /init\(\{ modules: \["schemas"\] \}\)/);
  assert.deepEqual(out.after, ["context_compiler_bg.wasm", "context_compiler_schema_bg.wasm"]);
  assert.deepEqual(
    { valid: out.valid, badPath: out.badPath, invalid: out.invalid },
    { valid: true, badPath: ["/result"], invalid: "INVALID_SCHEMA" },
  );
});

test("the event bus is a module of its own, fetched only when init names it; a session feeds it", async () => {
  const context = await browser.newContext();
  const p = await openHarness(context);
  const out = await p.evaluate(() => globalThis.harness.bus());
  await context.close();
  assert.deepEqual(out.before, ["context_compiler_bg.wasm"]);
  assert.equal(out.beforeInit?.code, "NOT_INITIALIZED");
  assert.match(out.beforeInit.message, /init\(\{ modules: \["bus"\] \}\)/);
  assert.deepEqual(out.after, ["context_compiler_bg.wasm", "context_compiler_bus_bg.wasm"]);
  assert.deepEqual(out.seen, [["message_received", "fed", "hello from the page", "browser"]]);
});

test("a session and its artifacts survive a page reload", async () => {
  const context = await browser.newContext();
  const p = await openHarness(context);
  const saved = await p.evaluate(() => globalThis.harness.saveBeforeReload());
  assert.deepEqual(saved.second, { eventsWritten: 1, rewritten: false });
  await p.reload();
  await p.waitForFunction(() => globalThis.harnessReady === true);
  const loaded = await p.evaluate((id) => globalThis.harness.loadAfterReload(id), saved.artifactId);
  await context.close();
  assert.equal(loaded.exported, saved.exported);
  assert.deepEqual(
    { contentLength: loaded.contentLength, handles: loaded.handles, sessions: loaded.sessions },
    { contentLength: 12_000, handles: 1, sessions: ["conversation"] },
  );
});

test("the memory loop in IndexedDB: a fact from session 1 is compiled into session 2 after a reload", async () => {
  const context = await browser.newContext();
  const p = await openHarness(context);
  assert.deepEqual(await p.evaluate(() => globalThis.harness.memoryBeforeReload()), { size: 1 });
  await p.reload();
  await p.waitForFunction(() => globalThis.harnessReady === true);
  const after = await p.evaluate(() => globalThis.harness.memoryAfterReload());
  await context.close();
  assert.deepEqual(after, { size: 1, recalled: true });
});
