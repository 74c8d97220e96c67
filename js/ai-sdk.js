// agent-context-compiler/ai-sdk: what the Vercel AI SDK (`ai`, an optional
// peer dependency) needs from this package. It imports nothing of the
// package's main entry, so it never loads a second WebAssembly instance: it
// works on the objects it is given.
import { jsonSchema, tool } from "ai";
import { codedError } from "./coded.js";

/**
 * The tools a run offers (`ToolSpec`s: `{ name, description, parameters }`,
 * as `runCompiled` hands them to its model in the `ai-sdk` format) as an AI
 * SDK `ToolSet`: each schema wrapped with `jsonSchema()`, and no `execute`,
 * so that the SDK returns the calls and the run records and runs them.
 */
export function aiSdkTools(specs) {
  if (!Array.isArray(specs)) throw codedError("INVALID_ARGUMENT", "aiSdkTools takes an array of tool specs ({ name, description, parameters })");
  const set = {};
  specs.forEach((spec, i) => {
    const where = `aiSdkTools: specs[${i}]`;
    if (spec === null || typeof spec !== "object") throw codedError("INVALID_ARGUMENT", `${where} is not an object`);
    const { name, description, parameters } = spec;
    if (typeof name !== "string" || name === "") throw codedError("INVALID_ARGUMENT", `${where}.name must be a non-empty string`);
    if (Object.hasOwn(set, name)) throw codedError("INVALID_ARGUMENT", `${where}: a second tool named ${name}`);
    if (description !== undefined && typeof description !== "string") throw codedError("INVALID_ARGUMENT", `${where}.description must be a string`);
    if (parameters === null || typeof parameters !== "object" || Array.isArray(parameters)) {
      throw codedError("INVALID_ARGUMENT", `${where}.parameters must be a JSON Schema object`);
    }
    set[name] = tool({ description, inputSchema: jsonSchema(parameters) });
  });
  return set;
}
