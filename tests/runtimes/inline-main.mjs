// esbuild with no loader flags (`--bundle --format=esm`): the inline entry
// has every module inside it, so one `init()` fetches nothing.
import * as lib from "agent-context-compiler/inline";
import { runInBrowser } from "./browser.mjs";

await lib.init();
await runInBrowser(lib);
