// esbuild: it does not follow the glue's `new URL(..., import.meta.url)`, so
// the .wasm is imported by name with `--loader:.wasm=file`, which copies it
// beside the bundle and gives its URL, and handed to `init`.
import * as lib from "agent-context-compiler";
import wasmUrl from "agent-context-compiler/context_compiler.wasm";
import storesUrl from "agent-context-compiler/stores.wasm";
import { runInBrowser } from "./browser.mjs";

await lib.init(wasmUrl);
await lib.initStores(storesUrl);
await runInBrowser(lib);
