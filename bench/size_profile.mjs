// Issue 52, item 2: where the main module's bytes go. Reads the module as
// rustc linked it (before wasm-bindgen and wasm-opt, with its name
// section): each function's body size from the code section, its name from
// the name section; prints the 10 largest functions and the 10 largest
// owners (the first two segments of a function's path, generic arguments
// dropped), with the gzipped size of the shipped module beside them.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

const LINKED = new URL("../target/wasm32-unknown-unknown/release/context_compiler_npm.wasm", import.meta.url);
const SHIPPED = new URL("../pkg/context_compiler_bg.wasm", import.meta.url);

/** Each defined function's { name, bytes }, from a wasm binary. */
export function functionSizes(bytes) {
  let at = 8;
  const leb = () => {
    let value = 0;
    let shift = 0;
    let byte;
    do {
      byte = bytes[at++];
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return value;
  };
  const text = (n) => new TextDecoder().decode(bytes.subarray(at, (at += n)));
  let imported = 0;
  const sizes = [];
  const names = new Map();
  while (at < bytes.length) {
    const id = bytes[at++];
    const size = leb();
    const end = at + size;
    if (id === 2) {
      // Imports: functions take the first indices.
      for (let n = leb(); n > 0; n--) {
        text(leb());
        text(leb());
        const kind = bytes[at++];
        if (kind === 0) {
          leb();
          imported++;
        } else if (kind === 1) {
          at++;
          const flags = leb();
          leb();
          if (flags & 1) leb();
        } else if (kind === 2) {
          const flags = leb();
          leb();
          if (flags & 1) leb();
        } else if (kind === 3) {
          at += 2;
        } else {
          leb();
          leb();
        }
      }
    } else if (id === 10) {
      for (let n = leb(); n > 0; n--) {
        const body = leb();
        sizes.push(body);
        at += body;
      }
    } else if (id === 0 && text(leb()) === "name") {
      while (at < end) {
        const sub = bytes[at++];
        const subEnd = leb() + at;
        if (sub === 1) {
          for (let n = leb(); n > 0; n--) {
            const index = leb();
            names.set(index, text(leb()));
          }
        }
        at = subEnd;
      }
    }
    at = end;
  }
  return sizes.map((b, i) => ({ name: names.get(imported + i) ?? `function ${imported + i}`, bytes: b }));
}

const ESCAPES = { LT: "<", GT: ">", RF: "&", BP: "*", C: ",", SP: "@", LP: "(", RP: ")", u20: " ", u27: "'", u5b: "[", u5d: "]", u7b: "{", u7d: "}", u7e: "~" };

/** A Rust legacy-mangled name (`_ZN...E`) as a path, its hash dropped. */
export function demangle(name) {
  const m = /^_ZN(.*)E$/.exec(name);
  if (!m) return name;
  const parts = [];
  let rest = m[1];
  while (rest.length > 0) {
    const len = /^\d+/.exec(rest);
    if (!len) return name;
    const start = len[0].length;
    parts.push(rest.slice(start, start + Number(len[0])));
    rest = rest.slice(start + Number(len[0]));
  }
  if (/^h[0-9a-f]{16}$/.test(parts.at(-1) ?? "")) parts.pop();
  return parts
    .map((p) => p.replace(/^_\$/, "$").replace(/\$([A-Za-z0-9]+)\$/g, (all, code) => ESCAPES[code] ?? all).replaceAll("..", "::"))
    .join("::");
}

/** Who a function belongs to: the first two segments of its path (of the
 * self type for a trait impl), generic arguments and closures dropped. */
function owner(name) {
  let path = demangle(name);
  const impl = /^<(.+?) as .+>::/.exec(path);
  if (impl) path = impl[1];
  path = path.replace(/^<|>$/g, "");
  while (/<[^<>]*>/.test(path)) path = path.replace(/<[^<>]*>/g, "");
  return path.split("::").slice(0, 2).join("::");
}

export function sizeProfile() {
  const linked = readFileSync(LINKED);
  const shipped = readFileSync(SHIPPED);
  const functions = functionSizes(linked).sort((a, b) => b.bytes - a.bytes);
  const total = functions.reduce((n, f) => n + f.bytes, 0);
  const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
  // Gzipped as scripts/build.sh and the README measure it: `gzip -9`.
  const gzipped = spawnSync("gzip", ["-9c", SHIPPED.pathname], { maxBuffer: 1 << 26 }).stdout.length;
  console.log(`\nthe main module's size (issue 52): ${shipped.length.toLocaleString("en")} bytes shipped, ${gzipped.toLocaleString("en")} gzipped (target 400 KB = 409,600); as linked, ${functions.length.toLocaleString("en")} functions, ${kb(total)} of code`);
  console.log("  the 10 largest functions (as linked):");
  for (const f of functions.slice(0, 10)) console.log(`    ${kb(f.bytes).padStart(9)}  ${demangle(f.name).slice(0, 110)}`);
  const owners = new Map();
  for (const f of functions) owners.set(owner(f.name), (owners.get(owner(f.name)) ?? 0) + f.bytes);
  console.log("  the 10 largest owners (crate::module, generics dropped):");
  for (const [name, bytes] of [...owners].sort((a, b) => b[1] - a[1]).slice(0, 10)) {
    console.log(`    ${kb(bytes).padStart(9)}  ${((100 * bytes) / total).toFixed(1).padStart(4)}%  ${name}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) sizeProfile();
