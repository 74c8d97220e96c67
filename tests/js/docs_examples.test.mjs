// Every JavaScript block of README.md and docs/*.md runs: each in a process of
// its own, with the fixtures the comment above it names
// (`<!-- run: session, openai -->`, see ./docs_fixtures.mjs) declared before
// its code, in a fresh working directory. `<!-- run: no — reason -->` leaves
// out a block that cannot run here, with the reason; nothing else is left out.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { FIXTURE_NAMES } from "./docs_fixtures.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const fixtures = fileURLToPath(new URL("./docs_fixtures.mjs", import.meta.url));
const out = `${root}target/docs-examples/`;

/** The JavaScript blocks of `file`: { where, code, directive }. */
function blocks(file) {
  const lines = readFileSync(`${root}${file}`, "utf8").split("\n");
  const found = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```js\s*$/.exec(lines[i]);
    if (!open) continue;
    const indent = open[1].length;
    const start = i;
    const code = [];
    for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]); i++) code.push(lines[i].slice(indent));
    let j = start - 1;
    while (j >= 0 && lines[j].trim() === "") j--;
    const directive = /^\s*<!--\s*run(?::\s*(.*?))?\s*-->\s*$/.exec(lines[j] ?? "");
    found.push({ where: `${file}:${start + 1}`, code: code.join("\n"), directive: directive ? (directive[1] ?? "") : null });
  }
  return found;
}

const files = ["README.md", ...readdirSync(`${root}docs`).filter((n) => n.endsWith(".md")).sort().map((n) => `docs/${n}`)];
const all = files.flatMap(blocks);

/** Runs `path` with node; resolves to { status, stderr }. */
function run(path) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path], { cwd: root, stdio: ["ignore", "ignore", "pipe"], env: process.env });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    child.on("close", (status, signal) => {
      clearTimeout(timer);
      resolve({ status: status ?? signal, stderr });
    });
  });
}

test("every block is runnable or says why not, and names only fixtures there are", () => {
  assert.ok(all.length >= 25, `${all.length} blocks`);
  for (const b of all) {
    if (b.directive === null || b.directive === "") continue;
    const no = /^no\b\s*[—-]?\s*(.*)$/.exec(b.directive);
    if (no) {
      assert.ok(no[1].length >= 20, `${b.where}: a block left out says why (${b.directive})`);
      continue;
    }
    for (const name of b.directive.split(",").map((s) => s.trim())) assert.ok(FIXTURE_NAMES.includes(name), `${b.where}: no fixture ${name}`);
  }
  const left = all.filter((b) => /^no\b/.test(b.directive ?? ""));
  assert.ok(left.length <= 6, `left out: ${left.map((b) => b.where).join(", ")}`);
});

test("every runnable block runs", async () => {
  mkdirSync(out, { recursive: true });
  const runnable = all.filter((b) => !/^no\b/.test(b.directive ?? ""));
  const failures = [];
  let next = 0;
  const worker = async () => {
    while (next < runnable.length) {
      const b = runnable[next++];
      const names = (b.directive ?? "").split(",").map((s) => s.trim()).filter(Boolean);
      const path = `${out}${b.where.replace(/[/:.]/g, "_")}.mjs`;
      const prelude = `import { make as __make } from ${JSON.stringify(fixtures)};\nconst { ${names.join(", ")} } = await __make(${JSON.stringify(names)});\n`;
      writeFileSync(path, `${prelude}${b.code}\nprocess.exit(0);\n`);
      const { status, stderr } = await run(path);
      if (status !== 0) failures.push(`${b.where} (exit ${status}):\n${stderr.split("\n").slice(0, 12).join("\n")}`);
    }
  };
  await Promise.all([worker(), worker()]);
  assert.deepEqual(failures, [], failures.join("\n\n"));
  assert.ok(runnable.length >= 20, `${runnable.length} blocks ran`);
});
