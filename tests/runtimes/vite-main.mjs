// Vite: the package's main entry resolves to the web entry, and `init()`
// with no argument fetches the .wasm that Vite emitted for the glue's
// `new URL("context_compiler_bg.wasm", import.meta.url)`.
import * as lib from "agent-context-compiler";
import { runInBrowser } from "./browser.mjs";

await lib.init();
await lib.initStores();
await runInBrowser(lib);
