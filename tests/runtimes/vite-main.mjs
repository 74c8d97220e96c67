// Vite: the package's main entry resolves to the web entry, and one `init()`
// with no argument fetches every .wasm that Vite emitted for the glues'
// `new URL("…_bg.wasm", import.meta.url)`.
import * as lib from "agent-context-compiler";
import { runInBrowser } from "./browser.mjs";

await lib.init();
await runInBrowser(lib);
