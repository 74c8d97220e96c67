/** The raw WebAssembly module (e.g. for Cloudflare workerd's `import wasm from ".../wasm"`). */
declare const wasm: WebAssembly.Module;
export default wasm;
