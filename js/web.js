// Web / edge entry (browsers, web workers, Deno, Cloudflare workerd): call
// `await init()` (or `initSync(module)`) once before using anything. Calls
// made before that throw a ContextCompilerError with code NOT_INITIALIZED.
import * as glue from "../pkg/context_compiler.js";

let ready = false;

function notInitialized(name) {
  const e = new Error(
    `agent-context-compiler: ${name} was used before initialisation; call \`await init()\` (or \`initSync(module)\`) first`,
  );
  e.name = "ContextCompilerError";
  e.code = "NOT_INITIALIZED";
  return e;
}

function guard(name, target) {
  const check = () => {
    if (!ready) throw notInitialized(name);
  };
  return new Proxy(target, {
    construct(t, args, newTarget) {
      check();
      return Reflect.construct(t, args, newTarget);
    },
    apply(t, thisArg, args) {
      check();
      return Reflect.apply(t, thisArg, args);
    },
    get(t, prop, receiver) {
      const value = Reflect.get(t, prop, receiver);
      if (typeof value === "function" && prop !== "prototype" && Object.hasOwn(t, prop)) {
        return (...args) => {
          check();
          return value.apply(t, args);
        };
      }
      return value;
    },
  });
}

/**
 * Initialises the module. `input` is a URL, a `Response`, bytes, or a
 * `WebAssembly.Module`; by default the `.wasm` next to the glue is fetched.
 */
export async function init(input) {
  if (ready) return;
  await glue.default(input === undefined ? undefined : { module_or_path: input });
  ready = true;
}

/** Initialises synchronously from bytes or a `WebAssembly.Module` (e.g. workerd's wasm import). */
export function initSync(input) {
  if (ready) return;
  glue.initSync({ module: input });
  ready = true;
}

export const ArtifactAttacher = guard("ArtifactAttacher", glue.ArtifactAttacher);
export const Compactor = guard("Compactor", glue.Compactor);
export const ContextCompiler = guard("ContextCompiler", glue.ContextCompiler);
export const ContextWindow = guard("ContextWindow", glue.ContextWindow);
export const EventLog = guard("EventLog", glue.EventLog);
export const HistorySelector = guard("HistorySelector", glue.HistorySelector);
export const InMemoryBackend = guard("InMemoryBackend", glue.InMemoryBackend);
export const IndexedDbArtifactStore = guard("IndexedDbArtifactStore", glue.IndexedDbArtifactStore);
export const KvArtifactStore = guard("KvArtifactStore", glue.KvArtifactStore);
export const MemoryArtifactStore = guard("MemoryArtifactStore", glue.MemoryArtifactStore);
export const MemoryPreloader = guard("MemoryPreloader", glue.MemoryPreloader);
export const PerceptionAligner = guard("PerceptionAligner", glue.PerceptionAligner);
export const SchemaRegistry = guard("SchemaRegistry", glue.SchemaRegistry);
export const Session = guard("Session", glue.Session);
export const TokenBudget = guard("TokenBudget", glue.TokenBudget);
export const ToolEvent = guard("ToolEvent", glue.ToolEvent);
export const ToolInterruptHandler = guard("ToolInterruptHandler", glue.ToolInterruptHandler);
export const WorkingContext = guard("WorkingContext", glue.WorkingContext);
export const contentId = guard("contentId", glue.contentId);
export const countTokens = guard("countTokens", glue.countTokens);
export const estimateTokens = guard("estimateTokens", glue.estimateTokens);
export const redact = guard("redact", glue.redact);
export * from "./constants.js";
