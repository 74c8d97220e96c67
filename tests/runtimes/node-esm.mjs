// Node, ES modules: the package's main entry, storage in files under a
// temporary directory (a KV adapter over node:fs/promises).
import * as lib from "agent-context-compiler";
import { fileKv } from "./file_kv.mjs";
import { workload } from "./workload.mjs";

console.log(JSON.stringify(await workload(lib, await fileKv(), 65536)));
