import type { Bytes, WasmModule } from "./host-types.js";
/**
 * A `.wasm` of the package, as the importing tool gives it; each form is one
 * `init` / `loadTokenizer` accepts:
 * - a compiled `WebAssembly.Module` in Cloudflare workerd and wrangler
 *   (`import wasm from "agent-context-compiler/context_compiler.wasm"`);
 * - a URL string with esbuild's `--loader:.wasm=file` or Vite's `?url` suffix;
 * - bytes with esbuild's `--loader:.wasm=binary`.
 */
declare const wasm: WasmModule | string | Bytes;
export default wasm;
