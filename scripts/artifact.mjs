// Prints the executable cargo built for a target, read from the JSON messages
// of a build (`cargo ... --message-format=json-render-diagnostics > FILE`).
// Usage: node scripts/artifact.mjs FILE KIND NAME   (e.g. example wasmtime_host)
import { readFileSync } from "node:fs";

const [file, kind, name] = process.argv.slice(2);
if (!file || !kind || !name) {
  console.error("usage: node scripts/artifact.mjs FILE KIND NAME");
  process.exit(2);
}
const found = readFileSync(file, "utf8")
  .split("\n")
  .filter((line) => line.startsWith("{"))
  .map((line) => JSON.parse(line))
  .filter((m) => m.reason === "compiler-artifact" && m.executable && m.target.name === name && m.target.kind.includes(kind) && !m.profile.test);
if (found.length !== 1) {
  console.error(`artifact: expected one ${kind} '${name}' in ${file}, found ${found.length}`);
  process.exit(1);
}
console.log(found[0].executable);
