// esbuild with `--loader:.wasm=file`: it does not follow the glues'
// `new URL(..., import.meta.url)`, so each .wasm is imported by name (esbuild
// copies it beside the bundle and gives its URL) and handed to `init`.
import * as lib from "agent-context-compiler";
import busUrl from "agent-context-compiler/bus.wasm";
import wasmUrl from "agent-context-compiler/context_compiler.wasm";
import schemaUrl from "agent-context-compiler/schema.wasm";
import storesUrl from "agent-context-compiler/stores.wasm";
import { runInBrowser } from "./browser.mjs";

await lib.init({ wasm: { main: wasmUrl, bus: busUrl, stores: storesUrl, schemas: schemaUrl } });
await runInBrowser(lib);
