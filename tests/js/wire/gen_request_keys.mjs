// Regenerates request_keys.mjs from the provider SDKs' request type
// declarations in node_modules, with the TypeScript checker:
//
//   node tests/js/wire/gen_request_keys.mjs            # rewrite request_keys.mjs
//   node tests/js/wire/gen_request_keys.mjs --check    # exit 1 if it is stale
//
// Each API's root request type is walked property by property; every object
// type reached (interfaces, namespace members, inline object literals) becomes
// a named shape listing its declared keys, a key's value naming the shape(s)
// its value may take (0: not checked further: primitives, literals, free-form
// `{ [key: string]: unknown }` records such as JSON schemas and metadata).
// Objects with a literal `type` or `role` get a `tag` listing the values, so
// the checker can pick the union member an object in the body is.
import ts from "typescript";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "../../..");
const nm = join(root, "node_modules");

/**
 * The key sets: the package declaring the request type (`via`: as resolved
 * from that package), its declaration file and root request type.
 * "anthropic" is the top-level @anthropic-ai/sdk (1.x: API version
 * 2026-10-21); "anthropic-2023-06-01" is the one @langchain/anthropic uses
 * (0.x), whose types match the `anthropic-version: 2023-06-01` that
 * ChatAnthropic and @ai-sdk/anthropic send.
 */
export const ROOTS = {
  "openai-chat": { pkg: "openai", file: "resources/chat/completions/completions.d.ts", type: "ChatCompletionCreateParamsBase" },
  "openai-responses": { pkg: "openai", file: "resources/responses/responses.d.ts", type: "ResponseCreateParamsBase" },
  anthropic: { pkg: "@anthropic-ai/sdk", file: "resources/messages/messages.d.ts", type: "MessageCreateParamsBase" },
  "anthropic-2023-06-01": { pkg: "@anthropic-ai/sdk", via: "@langchain/anthropic", file: "resources/messages/messages.d.ts", type: "MessageCreateParamsBase" },
};

const TAGS = ["type", "role"];

/** The directory of package `pkg`, as `via` (or the repository) resolves it. */
function pkgDir(pkg, via) {
  if (!via) return join(nm, pkg);
  let dir = dirname(createRequire(join(nm, via, "package.json")).resolve(pkg));
  while (!(existsSync(join(dir, "package.json")) && JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).name === pkg)) {
    if (dir === dirname(dir)) throw new Error(`gen_request_keys: no ${pkg} package found from ${via}`);
    dir = dirname(dir);
  }
  return dir;
}

const version = (dir) => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).version;

/** The declaration file of an API's root request type. */
const pathOf = (api) => join(pkgDir(ROOTS[api].pkg, ROOTS[api].via), ROOTS[api].file);

/** Walks one API's root type; returns { shapes: { name: { file, tag?, keys } }, root }. */
function walk(api, program) {
  const { type: typeName } = ROOTS[api];
  const path = pathOf(api);
  const file = relative(nm, path);
  const checker = program.getTypeChecker();
  const mod = checker.getSymbolAtLocation(program.getSourceFile(path));
  const sym = checker.getExportsOfModule(mod).find((s) => s.name === typeName);
  const rootType = checker.getDeclaredTypeOfSymbol(sym);

  const names = new Map(); // ts.Type -> shape name
  const shapes = {};
  const queue = [];

  const declFile = (t) => {
    const d = (t.aliasSymbol ?? t.symbol)?.declarations?.[0];
    return d ? relative(nm, d.getSourceFile().fileName) : file;
  };
  // "…/completions".ChatCompletionContentPartImage.ImageURL -> ChatCompletionContentPartImage.ImageURL
  const qualified = (s) => checker.getFullyQualifiedName(s).replace(/^"[^"]*"\./, "");

  const isFree = (t) =>
    (t.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) !== 0 ||
    checker.getIndexInfosOfType(t).length > 0;

  /** The object types a value of type `t` may be (arrays see through to their elements). */
  function objectsOf(t, out = []) {
    if (t.isUnion()) {
      for (const m of t.types) objectsOf(m, out);
    } else if (checker.isArrayType(t) || checker.isTupleType(t)) {
      for (const a of checker.getTypeArguments(t)) objectsOf(a, out);
    } else if (t.isIntersection()) {
      // `string & {}` is a string; an intersection of objects is an object.
      if (t.types.every((m) => m.flags & ts.TypeFlags.Object)) out.push(t);
    } else if (t.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) {
      out.push(t);
    } else if (t.flags & ts.TypeFlags.Object) {
      out.push(t);
    }
    return out;
  }

  /** The shape reference for a property of type `t` declared at `owner.prop`. */
  function refOf(t, owner, prop) {
    const objects = objectsOf(t);
    if (objects.length === 0 || objects.some(isFree)) return 0;
    const refs = objects.map((o, i) => nameOf(o, objects.length === 1 ? `${owner}.${prop}` : `${owner}.${prop}.${i}`));
    // Sorted: TypeScript orders union members by type identity, not as declared.
    return refs.length === 1 ? refs[0] : [...new Set(refs)].sort();
  }

  function nameOf(t, fallback) {
    if (names.has(t)) return names.get(t);
    const s = t.aliasSymbol ?? t.symbol;
    let name = s && !s.name.startsWith("__") ? qualified(s) : fallback;
    // Instantiations of a generic alias share its symbol: name them by where they are used.
    if (t.aliasTypeArguments?.length) name = fallback;
    while (name in shapes) name += "'";
    names.set(t, name);
    shapes[name] = null;
    queue.push([t, name]);
    return name;
  }

  function literalValues(p) {
    const pt = checker.getTypeOfSymbol(p);
    const members = pt.isUnion() ? pt.types : [pt];
    const values = [];
    for (const m of members) {
      if (m.flags & ts.TypeFlags.StringLiteral) values.push(m.value);
      else if (m.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)) values.push(null);
      else return null; // a plain string: not a discriminant
    }
    if (p.flags & ts.SymbolFlags.Optional) values.push(null);
    return [...new Set(values)].sort((a, b) => (a === null ? -1 : b === null ? 1 : a < b ? -1 : a > b ? 1 : 0));
  }

  const rootName = nameOf(rootType, typeName);
  while (queue.length) {
    const [t, name] = queue.shift();
    const shape = { file: declFile(t) };
    const tag = {};
    for (const k of TAGS) {
      const p = t.getProperty(k);
      const values = p && literalValues(p);
      if (values) tag[k] = values;
    }
    if (Object.keys(tag).length) shape.tag = tag;
    shape.keys = {};
    for (const p of checker.getPropertiesOfType(t)) {
      shape.keys[p.name] = TAGS.includes(p.name) && shape.tag?.[p.name] ? 0 : refOf(checker.getTypeOfSymbol(p), name, p.name);
    }
    shapes[name] = shape;
  }
  return { root: rootName, shapes };
}

/** The module text of request_keys.mjs. */
export function generate() {
  const apis = {};
  // One program (one checker, the default lib loaded once) for every root file.
  const program = ts.createProgram([...new Set(Object.keys(ROOTS).map(pathOf))], { strict: true, noEmit: true, skipLibCheck: true, types: [] });
  for (const api of Object.keys(ROOTS)) apis[api] = walk(api, program);
  const lines = [];
  lines.push(
    "// GENERATED by tests/js/wire/gen_request_keys.mjs from the provider SDKs' own",
    "// request type declarations; do not edit by hand. Regenerate after upgrading",
    "// `openai`, `@anthropic-ai/sdk` or `@langchain/anthropic`:",
    "//   node tests/js/wire/gen_request_keys.mjs",
    "// Key sets (package under node_modules/, version, root request type):",
    ...Object.entries(ROOTS).map(([api, r]) => `//   ${api}: ${relative(nm, pkgDir(r.pkg, r.via))} ${version(pkgDir(r.pkg, r.via))}, ${r.type}`),
    "//",
    "// REQUEST_KEYS[api] = { root, shapes }: `root` names the request body's shape;",
    "// each shape lists the keys its type declares: `keys[k]` is 0 when the value is",
    "// not checked further (primitives, literals, free-form records such as JSON",
    "// schemas and metadata), else the name of the shape it takes, or a list of",
    "// names when it is a union (arrays are seen through: the shape of the items).",
    "// `tag` gives the literal values of the object's `type` / `role` (null: may be",
    "// absent), which pick the member of a union an object is. Shapes are grouped",
    "// by the declaration file (under node_modules/) each key list was read from.",
    "",
    "/** The allowed request keys of each API, read from the provider SDKs' request types. */",
    "export const REQUEST_KEYS = {",
  );
  for (const [api, { root, shapes }] of Object.entries(apis)) {
    lines.push(`  ${JSON.stringify(api)}: {`, `    root: ${JSON.stringify(root)},`, "    shapes: {");
    const byFile = new Map();
    for (const [name, shape] of Object.entries(shapes)) {
      if (!byFile.has(shape.file)) byFile.set(shape.file, []);
      byFile.get(shape.file).push([name, shape]);
    }
    for (const [file, list] of byFile) {
      lines.push(`      // Read from node_modules/${file}`);
      for (const [name, shape] of list) {
        const tag = shape.tag ? ` tag: ${JSON.stringify(shape.tag)},` : "";
        const entries = Object.entries(shape.keys).map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v).replaceAll('","', '", "')}`);
        const line = `      ${JSON.stringify(name)}: {${tag} keys: { ${entries.join(", ")} } },`;
        if (line.length <= 120) {
          lines.push(line);
        } else {
          lines.push(`      ${JSON.stringify(name)}: {${tag} keys: {`);
          for (const e of entries) lines.push(`        ${e},`);
          lines.push("      } },");
        }
      }
    }
    lines.push("    },", "  },");
  }
  lines.push("};", "");
  return lines.join("\n");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const target = join(here, "request_keys.mjs");
  const text = generate();
  if (process.argv.includes("--check")) {
    const current = readFileSync(target, "utf8");
    if (current !== text) {
      console.error("tests/js/wire/request_keys.mjs is stale: run node tests/js/wire/gen_request_keys.mjs");
      process.exit(1);
    }
    console.log("request_keys.mjs is up to date");
  } else {
    writeFileSync(target, text);
    console.log(`wrote ${relative(root, target)}`);
  }
}
