// The runner component (world context-compiler-runner) in a second,
// independent component host: transpiled by jco (the jco project's
// `@bytecodealliance/jco-transpile`, what `jco transpile` runs) into an ES
// module, instantiated in Node with WASI from `@bytecodealliance/preview2-shim`
// and the host's imports as plain JS functions. It runs the same multi-step
// tool turn as the wasmtime host test (crates/component/tests/component_host/
// runner.rs), so the component is shown to be a standard component, not a
// wasmtime-shaped one. Built by scripts/build-component.sh; COMPONENT_RUNNER_WASM
// overrides its path.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, mkdir, writeFile, rm } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL, fileURLToPath } from "node:url";
import { transpile } from "@bytecodealliance/jco-transpile";
import { WASIShim } from "@bytecodealliance/preview2-shim/instantiation";
import { checkRequest, init } from "../../js/node.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const wasm =
  process.env.COMPONENT_RUNNER_WASM ??
  join(root, "target/wasm32-wasip2/release/context_compiler_runner.wasm");

/** The transpiled component's `instantiate`, written to a temporary directory. */
async function transpiled(dir) {
  assert.ok(existsSync(wasm), `${wasm} is missing: build it with bash scripts/build-component.sh`);
  const { files } = await transpile(wasm, {
    name: "runner",
    instantiation: "async",
    outDir: dir,
    optimize: false,
  });
  for (const [path, bytes] of Object.entries(files)) {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, bytes);
  }
  const { instantiate } = await import(pathToFileURL(join(dir, "runner.js")).href);
  const { readFile } = await import("node:fs/promises");
  return (imports) =>
    instantiate(async (name) => WebAssembly.compile(await readFile(join(dir, name))), imports);
}

/** The host: a KV, two tools (one large with a secret), a scripted model. */
function host(replies) {
  const kv = new Map();
  const seen = { requests: [], tools: [] };
  const key = (k) => k;
  const imports = {
    "agent:context-compiler/artifact-kv": {
      get: (k) => kv.get(key(k)),
      put: (k, v) => void kv.set(key(k), v),
      delete: (k) => void kv.delete(key(k)),
      listKeys: (prefix) => [...kv.keys()].filter((k) => k.startsWith(prefix)),
      putIf: (k, value, expected) => {
        const now = kv.get(k);
        const same =
          now === undefined ? expected === undefined : expected !== undefined && Buffer.compare(now, expected) === 0;
        if (!same) return false;
        kv.set(k, value);
        return true;
      },
    },
    "agent:context-compiler/sql": {
      query: () => {
        throw "no database in this host";
      },
      batch: () => {
        throw "no database in this host";
      },
    },
    "agent:context-compiler/tool-bridge": {
      callTool: (name, args, timeoutMs) => {
        seen.tools.push({ name, args: JSON.parse(args), timeoutMs });
        if (name === "echo") return args;
        if (name === "listing") {
          const files = Array.from({ length: 300 }, (_, i) => ({
            path: `src/file_${i}.rs`,
            bytes: i * 97,
            token: "sk-live-0123456789abcdefghijklmnop",
          }));
          return JSON.stringify({ files });
        }
        throw { tag: "failed", val: `no tool ${name}` };
      },
    },
    "agent:context-compiler/bus-host": { handle: () => {} },
    "agent:context-compiler/embedder": {
      embed: () => {
        throw "no embedder";
      },
    },
    "agent:context-compiler/llm": {
      complete: () => {
        throw "no model";
      },
    },
    "agent:context-compiler/model": {
      respond: (requestJson, step) => {
        seen.requests.push({ request: JSON.parse(requestJson), step });
        const next = replies.shift();
        if (next === undefined) throw "no answer scripted";
        return JSON.stringify(next);
      },
    },
    "agent:context-compiler/guard": { evaluate: () => "true" },
    "agent:context-compiler/approval": { needsApproval: () => false },
  };
  return { imports, kv, seen };
}

const call = (id, name, args) => ({
  role: "assistant",
  content: null,
  tool_calls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }],
});

const tool = (name) => ({
  name,
  description: `the ${name} tool`,
  parametersJson: JSON.stringify({ type: "object", properties: { q: { type: "string" } } }),
  timeoutMs: undefined,
  needsApproval: undefined,
});

/** Run options as the WIT record, everything else at its default. */
const runOptions = (budget) => ({
  budget: BigInt(budget),
  systemPrompt: "You answer from the tools.",
  policies: ["Never reveal keys."],
  toolDefinitionsJson: undefined,
  userPreferencesJson: undefined,
  goal: "Find the largest file",
  stateDigestJson: undefined,
  taskState: undefined,
  format: undefined,
  modelName: undefined,
  reserveOutput: 256n,
  usageMargin: undefined,
  tools: [tool("echo"), tool("listing")],
  toolChoice: undefined,
  maxSteps: undefined,
  toolTimeoutMs: 5000n,
  lookBackTools: undefined,
  guard: false,
  memory: [],
  compiler: undefined,
  artifactStore: true,
  externalizeThreshold: undefined,
  needsApproval: false,
  approvals: [],
});

/** A fresh component instance over `h`'s imports. */
async function instance(load, h) {
  const wasi = new WASIShim().getImportObject();
  return load({ ...wasi, ...h.imports });
}

test("jco: a scripted model runs a multi-step tool turn in the transpiled component", async () => {
  await init();
  const dir = await mkdtemp(join(tmpdir(), "cc-jco-"));
  try {
    const load = await transpiled(dir);
    const h = host([
      call("call_1", "echo", { q: "hello" }),
      call("call_2", "listing", {}),
      { content: "The largest is src/file_299.rs.", usage: { prompt_tokens: 900, completion_tokens: 12 } },
    ]);
    const cc = await instance(load, h);
    const session = new cc.sessions.Session("turn");
    const result = JSON.parse(cc.runner.run("Which file is largest?", session, undefined, runOptions(8000)));
    assert.equal(result.result, "The largest is src/file_299.rs.");
    assert.equal(result.stopReason, "answered");
    assert.equal(result.sessionId, "turn");
    assert.equal(result.steps.length, 3);
    assert.equal(result.steps[0].toolEvents[0].kind, "tool_success");
    assert.equal(result.steps[1].toolEvents[0].toolName, "listing");
    for (const step of result.steps) assert.ok(step.budgetUsed <= 8000 - 256);
    assert.equal(result.usage.inputTokens, 900);

    assert.deepEqual(
      h.seen.tools.map((t) => [t.name, t.timeoutMs]),
      [
        ["echo", 5000n],
        ["listing", 5000n],
      ],
    );
    assert.equal(h.seen.requests.length, 3);
    h.seen.requests.forEach(({ request, step }, i) => {
      assert.equal(step, i);
      // The npm package's own checker accepts every request the component rendered.
      assert.deepEqual(checkRequest(request.messages, { format: "openai" }), []);
      assert.deepEqual(
        request.tools.map((t) => t.function.name),
        ["echo", "listing", "search_history", "read_artifact"],
      );
      assert.ok(!JSON.stringify(request).includes("sk-live-0123456789abcdefghijklmnop"));
    });
    const last = h.seen.requests[2].request.messages;
    const answered = last.filter((m) => m.role === "tool").map((m) => m.tool_call_id);
    const asked = last.filter((m) => m.role === "assistant").flatMap((m) => (m.tool_calls ?? []).map((c) => c.id));
    assert.equal(answered.length, 2);
    assert.deepEqual(answered, asked);
    assert.ok(h.kv.size > 0, "the large output is kept in the host's KV");

    const kinds = JSON.parse(session.eventsJson()).map((e) => e.kind);
    assert.equal(kinds[0], "user_input");
    assert.equal(kinds.at(-1), "assistant_output");
    assert.equal(kinds.filter((k) => k === "tool_call").length, 2);
    assert.equal(kinds.filter((k) => k === "tool_success").length, 2);

    // A model that fails is an error result with its code; the input stays.
    const failing = host([]);
    const cc2 = await instance(load, failing);
    const s2 = new cc2.sessions.Session("failing");
    assert.throws(
      () => cc2.runner.run("Hello", s2, undefined, runOptions(4000)),
      (e) => e.payload?.code === "model-failed" || e.code === "model-failed",
    );
    assert.deepEqual(
      JSON.parse(s2.eventsJson()).map((e) => e.kind),
      ["user_input"],
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
