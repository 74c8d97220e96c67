// Run by cold_start.test.mjs in a fresh process: what an import of the node
// entry and a first compile load — the JavaScript modules (through a module
// hook), Node's builtin modules and the WebAssembly modules read. Prints them.
import { register } from "node:module";
import { MessageChannel } from "node:worker_threads";
import { firstCompile } from "./first_compile.mjs";
import { noteWasmReads } from "./wasm_reads.mjs";

const { port1, port2 } = new MessageChannel();
const modules = [];
port1.on("message", (url) => modules.push(url));
register("./load_hooks.mjs", import.meta.url, { data: { port: port2 }, transferList: [port2] });
const wasm = noteWasmReads();
const builtinsBefore = new Set(process.moduleLoadList);

const messages = await firstCompile(await import("agent-context-compiler"));

// The hook's messages come from its own thread: a round trip through the
// hooks (one more resolve) flushes them.
await import("node:path");
await new Promise((r) => setTimeout(r, 100));
port1.close();
console.log(
  JSON.stringify({
    modules: modules.filter((u) => u.startsWith("file:")).map((u) => new URL(u).pathname),
    builtins: process.moduleLoadList.filter((m) => !builtinsBefore.has(m)),
    wasm,
    messages: messages.length,
  }),
);
