// What the framework integrations (./ai-sdk.js, ./langchain.js,
// ./openai-agents.js) share: their options checked the same way. It imports
// nothing that loads the WebAssembly instance.
import { codedError } from "./coded.js";
import { unknownOption } from "./module-guard.js";
import { OPTION_KEYS } from "./option-keys.js";

/** The compile options an integration passes on (the format and tools are its own). */
const COMPILE_KEYS = OPTION_KEYS["ContextCompiler.compile"][0][1].filter((k) => !["format", "tools", "toolDefinitions"].includes(k));
const KEYS = ["session", "compiler", "budget", "store", ...COMPILE_KEYS];

/**
 * `options` of the integration `name` checked: an object with only known
 * keys (a misspelt one is `INVALID_ARGUMENT` naming the closest), a
 * `session` (or, with `perThread`, a function of the thread's id), a
 * `compiler` and a `budget`. Returns them with `store` and the compile's
 * own options apart; `own` names options of the integration itself, left
 * out of the compile's (read them from `options`).
 */
export function integrationOptions(name, options, { perThread, own = [] }) {
  if (options === null || typeof options !== "object") throw codedError("INVALID_ARGUMENT", `${name} takes { session, compiler, budget, ... }`);
  const typo = unknownOption(name, options, [...KEYS, ...own]);
  if (typo) throw typo;
  const { session, compiler, budget, store, ...rest } = options;
  const compileOptions = Object.fromEntries(Object.entries(rest).filter(([k]) => !own.includes(k)));
  const isSession = session !== null && typeof session === "object" && typeof session.record === "function";
  if (!isSession && !(perThread && typeof session === "function")) {
    throw codedError("INVALID_ARGUMENT", `${name}: session must be a Session${perThread ? " or a function of the thread's id giving one" : ""}`);
  }
  if (compiler === null || typeof compiler?.compile !== "function") throw codedError("INVALID_ARGUMENT", `${name}: compiler must be a ContextCompiler`);
  if (budget === undefined) throw codedError("INVALID_ARGUMENT", `${name}: budget is required`);
  return { session, compiler, budget, store, compileOptions };
}
