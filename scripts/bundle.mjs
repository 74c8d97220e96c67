// The package's entries as bundles (run by scripts/build.sh after the glue is
// generated; `node scripts/bundle.mjs` alone redoes them from js/ and pkg/).
//
// Each entry (js/node.js, js/web.js, js/workerd.js, js/inline.js) becomes one
// ES module in pkg/ (`pkg/entry-<name>.js`) that imports one chunk they all
// share (`pkg/core-<hash>.js`: the main module's glue and the JS layer, so
// that every entry uses one instance: a Session made through one entry is one
// for the others). An import and a first compile load those two files and the
// main `.wasm`, nothing else. The optional modules' glue
// (pkg/context_compiler_{bus,stores,schema}.js) stays out of them: it is
// imported when the module is first used (js/lazy-glue.js), but for the
// workerd entry, which imports it for `initSync`. The inline entry's
// gzipped modules (pkg/inline/) stay out too.
//
// The bundles sit in pkg/ beside the glue they hold, so that each glue's
// `new URL("…_bg.wasm", import.meta.url)` still finds its `.wasm`, and the
// JS layer's paths (`../pkg/…` from js/) resolve to the same files.
// `pkg/entry-internals.js` is for the tests (the glue of the entries'
// instance), not in the package.
import { readdirSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const ENTRIES = ["node", "web", "workerd", "inline", "internals"];

/** What stays a module of its own, imported by the path written in js/. */
const lazy = {
  name: "lazy",
  setup(b) {
    // The optional modules' glue, imported on first use; the inline entry's data.
    b.onResolve({ filter: /^\.\.\/pkg\/(context_compiler_(bus|stores|schema)|inline\/[\w]+)\.js$/ }, (args) =>
      args.kind === "dynamic-import" || args.path.startsWith("../pkg/inline/") ? { path: args.path, external: true } : undefined,
    );
  },
};

for (const f of readdirSync(`${root}/pkg`)) {
  if (/^(entry-\w+|core-\w+)\.js$/.test(f)) rmSync(`${root}/pkg/${f}`);
}

const result = await build({
  absWorkingDir: root,
  entryPoints: Object.fromEntries(ENTRIES.map((e) => [e, `js/${e}.js`])),
  outdir: "pkg",
  entryNames: "entry-[name]",
  chunkNames: "core-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "neutral",
  // Node's builtins are imported by the Node entry only.
  external: ["node:*"],
  target: "es2022",
  // Whitespace and syntax only, and the classes keep their names where the
  // bundle renames them (the guards' messages and option checks read them).
  minifyWhitespace: true,
  minifySyntax: true,
  keepNames: true,
  legalComments: "none",
  metafile: true,
  logLevel: "warning",
  plugins: [lazy],
});

// One shared chunk, and each entry's static imports are it and Node's builtins.
const outputs = Object.entries(result.metafile.outputs);
const chunks = outputs.filter(([path]) => /\/core-\w+\.js$/.test(path));
if (chunks.length !== 1) throw new Error(`bundle: expected one shared chunk, got ${chunks.map(([p]) => p).join(", ")}`);
for (const [path, out] of outputs) {
  const local = out.imports.filter((i) => i.kind === "import-statement" && !i.path.startsWith("node:") && !i.external);
  if (local.length > 1) throw new Error(`bundle: ${path} imports ${local.map((i) => i.path).join(", ")}`);
  console.log(`bundle: ${path} ${(out.bytes / 1024).toFixed(1)} KB`);
}
