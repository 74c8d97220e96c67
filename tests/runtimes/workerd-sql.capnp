# workerd configuration of the Durable Object recipe test
# (tests/js/runtimes.test.mjs bundles worker-sql.mjs into worker-sql.js
# beside this file): a Durable Object class with SQLite storage.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    # SQLite-backed Durable Objects keep their databases on disk; the test
    # makes this directory beside the config and removes it after.
    (name = "do-disk", disk = (path = "do-storage", writable = true)),
  ],
);

const worker :Workerd.Worker = (
  modules = [
    (name = "worker-sql.js", esModule = embed "worker-sql.js"),
    (name = "agent-context-compiler/context_compiler.wasm", wasm = embed "context_compiler.wasm"),
    (name = "agent-context-compiler/stores.wasm", wasm = embed "context_compiler_stores.wasm"),
  ],
  compatibilityDate = "2026-11-01",
  durableObjectNamespaces = [(className = "Conversation", uniqueKey = "acc-durable-recipe", enableSql = true)],
  durableObjectStorage = (localDisk = "do-disk"),
  bindings = [(name = "CONVERSATION", durableObjectNamespace = "Conversation")],
);
