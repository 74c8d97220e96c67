// The inline entry (`agent-context-compiler/inline`): the web entry with
// every module's `.wasm` inside the JavaScript (gzipped, base64), so that one
// `await init()` works in any bundler with no loader configuration and no
// `.wasm` to serve. It costs bytes: docs/runtimes.md, "The inline entry".
// The optional modules' bytes are imported only when `init` loads them.
import main from "../pkg/inline/context_compiler.js";
import { checkedOptions, init as initModules, useHostCrypto } from "./init.js";

useHostCrypto();

export * from "./public.js";

/** Each optional module's inlined bytes, imported when first loaded. */
const OPTIONAL = {
  bus: () => import("../pkg/inline/context_compiler_bus.js"),
  stores: () => import("../pkg/inline/context_compiler_stores.js"),
  schemas: () => import("../pkg/inline/context_compiler_schema.js"),
};

function decodeBase64(text) {
  if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(text);
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** A module's bytes from its gzipped, base64 text. */
async function unpack(text) {
  const stream = new Blob([decodeBase64(text)]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/**
 * Loads the main module and the optional ones `options.modules` names (by
 * default all: "bus", "stores", "schemas") from the bytes inside this entry.
 */
export async function init(options) {
  const { modules } = checkedOptions(options, false);
  const [mainBytes, ...optional] = await Promise.all([
    unpack(main),
    ...modules.map(async (m) => unpack((await OPTIONAL[m]()).default)),
  ]);
  const wasm = { main: mainBytes };
  modules.forEach((m, i) => {
    wasm[m] = optional[i];
  });
  await initModules({ modules, wasm });
}
