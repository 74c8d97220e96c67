# workerd configuration of the runtime test (tests/js/runtimes.test.mjs
# bundles worker.mjs into worker.js beside this file, the package's .wasm
# left as the module named in the import).
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [(name = "main", worker = .worker)],
);

const worker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    (name = "agent-context-compiler/context_compiler.wasm", wasm = embed "context_compiler.wasm"),
    (name = "agent-context-compiler/stores.wasm", wasm = embed "context_compiler_stores.wasm"),
  ],
  compatibilityDate = "2026-11-01",
  durableObjectNamespaces = [(className = "WorkloadStore", uniqueKey = "acc-runtime-workload")],
  durableObjectStorage = (inMemory = void),
  bindings = [(name = "STORE", durableObjectNamespace = "WorkloadStore")],
);
