// Writes pkg/inline/<module>.js for the inline entry (js/inline.js): each
// module's .wasm gzipped (level 9) and base64-encoded, as the default export.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";

const root = new URL("..", import.meta.url);
mkdirSync(new URL("pkg/inline", root), { recursive: true });
for (const name of ["context_compiler", "context_compiler_bus", "context_compiler_stores", "context_compiler_schema"]) {
  const wasm = readFileSync(new URL(`pkg/${name}_bg.wasm`, root));
  const text = gzipSync(wasm, { level: 9 }).toString("base64");
  writeFileSync(new URL(`pkg/inline/${name}.js`, root), `// ${name}_bg.wasm, gzipped and base64 (scripts/inline-modules.mjs).\nexport default "${text}";\n`);
  console.log(`inline: pkg/inline/${name}.js ${text.length} bytes (${wasm.length} bytes of wasm)`);
}
