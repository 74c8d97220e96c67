// Node, CommonJS: the package loaded with require() (Node >= 20.19 requires
// ES modules without a flag; package.json's engines says so), storage in
// files as in the ESM test.
const lib = require("agent-context-compiler");

(async () => {
  const { fileKv } = await import("./file_kv.mjs");
  const { workload } = await import("./workload.mjs");
  console.log(JSON.stringify(await workload(lib, await fileKv(), 65536)));
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
