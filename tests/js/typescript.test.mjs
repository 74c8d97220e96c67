// TypeScript consumers of the packed tarball: tests/ts/*.ts compiled with
// `strict` and `skipLibCheck: false` under each module resolution a project
// uses, as a Node project (@types/node, no DOM lib) and as a browser project
// (the DOM lib, no @types/node), plus the newest libs. Every class has a
// wrong call under `@ts-expect-error`, so a typing that accepts it fails.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("../..", import.meta.url).pathname;
const tsc = join(root, "node_modules/typescript/bin/tsc");
const sources = readdirSync(join(root, "tests/ts")).filter((n) => n.endsWith(".ts"));

function consumer() {
  const dir = mkdtempSync(join(tmpdir(), "acc-ts-"));
  // 20 MB a run: removed when the tests end.
  after(() => rmSync(dir, { recursive: true, force: true }));
  execFileSync("npm", ["pack", "--silent", "--pack-destination", dir], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  const tarball = readdirSync(dir).find((n) => n.endsWith(".tgz"));
  const app = join(dir, "app");
  mkdirSync(app);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--offline", join(dir, tarball)], { cwd: app, stdio: ["ignore", "pipe", "pipe"] });
  // @types/node, the provider SDKs the consumers check the formats
  // against, the frameworks the integrations are used in (and the model,
  // checkpointer and schemas a user's agent brings: @langchain/openai, a
  // LangGraph saver, zod, @types/json-schema) and OpenTelemetry's API (a
  // Tracer is a `tracer`), as the repository pins them (their own
  // dependencies resolve there).
  mkdirSync(join(app, "node_modules/@types"));
  mkdirSync(join(app, "node_modules/@anthropic-ai"));
  mkdirSync(join(app, "node_modules/@google"));
  mkdirSync(join(app, "node_modules/@ai-sdk"));
  mkdirSync(join(app, "node_modules/@langchain"));
  mkdirSync(join(app, "node_modules/@openai"));
  mkdirSync(join(app, "node_modules/@opentelemetry"));
  for (const name of ["@types/node", "@anthropic-ai/sdk", "@google/genai", "ai", "openai", "@ai-sdk/provider", "@langchain/core", "@langchain/openai", "@langchain/langgraph-checkpoint", "langchain", "@openai/agents", "@opentelemetry/api", "@types/json-schema", "zod"]) {
    symlinkSync(join(root, "node_modules", name), join(app, "node_modules", name));
  }
  for (const name of sources) cpSync(join(root, "tests/ts", name), join(app, name));
  return app;
}

const app = consumer();

const projects = [];
for (const resolution of ["node16", "nodenext", "bundler"]) {
  const module = resolution === "bundler" ? "esnext" : resolution;
  projects.push({ name: `${resolution}, Node project (no DOM lib)`, resolution, module, lib: ["es2022"], types: ["node"] });
  projects.push({ name: `${resolution}, browser project (DOM lib, no @types/node)`, resolution, module, lib: ["es2022", "dom"], types: [] });
}
projects.push({ name: "nodenext, esnext and DOM libs with @types/node", resolution: "nodenext", module: "nodenext", lib: ["esnext", "dom"], types: ["node"] });
projects.push({ name: "bundler, esnext lib, no DOM lib", resolution: "bundler", module: "esnext", lib: ["esnext"], types: ["node"] });

for (const p of projects) {
  test(`tsc --strict, skipLibCheck false: ${p.name}`, () => {
    const config = `tsconfig.${projects.indexOf(p)}.json`;
    writeFileSync(
      join(app, config),
      JSON.stringify({
        compilerOptions: {
          strict: true, noEmit: true, skipLibCheck: false, target: "es2022",
          module: p.module, moduleResolution: p.resolution, lib: p.lib, types: p.types,
        },
        // zoned.ts, streaming.ts, usage.ts, ai_sdk.ts, integrations.ts and
        // sdk_models.ts check the formats, streams, usage, the integrations
        // and the SDKs' calls as a run's model against the
        // provider SDKs and frameworks, whose own types need the DOM lib.
        // The Agents SDK's own declarations do not compile under node16
        // resolution (TS1542 in @openai/agents-openai), so integrations.ts is
        // left out there.
        files: (p.lib.includes("dom") ? sources : sources.filter((n) => !["zoned.ts", "streaming.ts", "usage.ts", "ai_sdk.ts", "integrations.ts", "sdk_models.ts", "compaction.ts"].includes(n)))
          .filter((n) => p.resolution !== "node16" || n !== "integrations.ts"),
      }),
    );
    const run = spawnSync(process.execPath, [tsc, "-p", config], { cwd: app, encoding: "utf8" });
    assert.equal(run.status, 0, `tsc reported:\n${run.stdout}${run.stderr}`);
  });
}

test("the checks can fail: a wrong call outside @ts-expect-error is reported", () => {
  writeFileSync(join(app, "wrong.ts"), `import { Session } from "agent-context-compiler";\nnew Session({ sessionId: 42 });\n`);
  writeFileSync(
    join(app, "tsconfig.wrong.json"),
    JSON.stringify({ compilerOptions: { strict: true, noEmit: true, module: "nodenext", moduleResolution: "nodenext", types: ["node"] }, files: ["wrong.ts"] }),
  );
  const run = spawnSync(process.execPath, [tsc, "-p", "tsconfig.wrong.json"], { cwd: app, encoding: "utf8" });
  assert.notEqual(run.status, 0);
  assert.match(run.stdout, /wrong\.ts\(2,\d+\): error TS2322/);
});
