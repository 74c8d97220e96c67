// The import benchmark's worker: a fresh instance (cold wasm memory), then
// the same import again once memory has grown, beside `JSON.parse` of the
// same document (the least any import must do).
import { parentPort, workerData } from "node:worker_threads";
import { Session } from "agent-context-compiler";

const { json } = workerData;
const timed = (f) => {
  const start = performance.now();
  f();
  return performance.now() - start;
};
const cold = timed(() => Session.importJson(json).free());
const warm = [0, 1, 2].map(() => timed(() => Session.importJson(json).free())).sort((a, b) => a - b)[1];
const parse = [0, 1, 2].map(() => timed(() => JSON.parse(json))).sort((a, b) => a - b)[1];
parentPort.postMessage({ cold, warm, parse });
