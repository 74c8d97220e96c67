// Every link in the README, ARCHITECTURE.md, CHANGELOG.md and docs/ leads
// somewhere: a relative link names a file or folder of the repository, and a
// `#fragment` names a heading of its target (GitHub's anchors). External
// links are only checked for their shape (the tests run offline).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative } from "node:path";

const root = new URL("../..", import.meta.url).pathname;
const docs = [
  "README.md",
  "ARCHITECTURE.md",
  "CHANGELOG.md",
  ...readdirSync(join(root, "docs")).filter((n) => n.endsWith(".md")).map((n) => `docs/${n}`),
];

/** The text of `markdown` outside fenced code blocks and inline code. */
function prose(markdown) {
  return markdown
    .split(/^```.*$/m)
    .filter((_, i) => i % 2 === 0)
    .join("\n")
    .replace(/`[^`\n]*`/g, "");
}

/** GitHub's anchor of a heading's text. */
function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, "")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors of a markdown file's headings (repeated ones numbered as GitHub does). */
function anchors(path) {
  const seen = new Map();
  const out = new Set();
  for (const line of readFileSync(path, "utf8").split(/^```.*$/m).filter((_, i) => i % 2 === 0).join("\n").split("\n")) {
    const m = /^#{1,6}\s+(.*)$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Every `[text](target)` and `![alt](target)` link of a markdown file. */
function links(markdown) {
  return [...prose(markdown).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]);
}

test("the docs exist and the README stays short", () => {
  for (const d of ["docs/runtimes.md", "docs/storage.md", "docs/tools.md", "docs/event-bus.md", "docs/component.md", "docs/benchmarks.md", "ARCHITECTURE.md"]) {
    assert.ok(existsSync(join(root, d)), `${d} exists`);
  }
  const lines = readFileSync(join(root, "README.md"), "utf8").split("\n").length;
  assert.ok(lines < 400, `README.md is ${lines} lines`);
});

test("every link in the docs leads to a file and a heading that exist", () => {
  const broken = [];
  let checked = 0;
  for (const doc of docs) {
    const path = join(root, doc);
    for (const target of links(readFileSync(path, "utf8"))) {
      checked++;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
        if (!/^(https?:\/\/[^\s/]+\.[^\s]+|mailto:.+)$/.test(target)) broken.push(`${doc}: ${target} (not a URL)`);
        continue;
      }
      const [file, fragment] = target.split("#");
      const resolved = file === "" ? path : join(dirname(path), decodeURIComponent(file));
      if (!existsSync(resolved)) {
        broken.push(`${doc}: ${target} (no ${relative(root, resolved)})`);
        continue;
      }
      if (fragment !== undefined && resolved.endsWith(".md") && !anchors(resolved).has(fragment)) {
        broken.push(`${doc}: ${target} (no heading #${fragment} in ${relative(root, resolved)})`);
      }
    }
  }
  assert.deepEqual(broken, []);
  assert.ok(checked > 20, `${checked} links checked`);
});

test("the link checker finds a broken file, a broken anchor and a relative path's heading", () => {
  assert.deepEqual(links("[a](docs/x.md#y) `[no](z.md)` ![img](p.png)\n```\n[no](w.md)\n```"), ["docs/x.md#y", "p.png"]);
  assert.equal(slug("Storage: artifacts and `sessions` (KV)"), "storage-artifacts-and-sessions-kv");
  assert.ok(anchors(join(root, "docs/runtimes.md")).has("the-inline-entry"));
});
