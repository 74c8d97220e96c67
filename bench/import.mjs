// The import benchmark's worker: a fresh instance (cold wasm memory), then
// the same import again once memory has grown (unless `coldOnly`), beside
// `JSON.parse` of the same document (the least any import must do).
import { parentPort, workerData } from "node:worker_threads";
import { Session } from "agent-context-compiler";

const { json, coldOnly } = workerData;
const timed = (f) => {
  const start = performance.now();
  f();
  return performance.now() - start;
};
const cold = timed(() => Session.importJson(json).free());
const median = (f) => [0, 1, 2].map(() => timed(f)).sort((a, b) => a - b)[1];
// `coldOnly`: a large document's warm imports and parses would only repeat.
const warm = coldOnly ? undefined : median(() => Session.importJson(json).free());
const parse = coldOnly ? timed(() => JSON.parse(json)) : median(() => JSON.parse(json));
parentPort.postMessage({ cold, warm, parse });
