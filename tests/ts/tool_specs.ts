// Tool specs whose `parameters` come from where a user's schemas come from
// (@types/json-schema's JSONSchema7, zod 4's z.toJSONSchema(), literals
// with different properties), taken as ToolSpecs by a compile and a run.
import type { JSONSchema7 } from "json-schema";
import { z } from "zod";
import { ContextCompiler, Session, runCompiled, lookBackToolDefinitions, type JsonSchemaObject, type ToolSpec } from "agent-context-compiler";

const readLogs: JSONSchema7 = {
  type: "object",
  properties: { path: { type: "string", description: "The log's path" }, lines: { type: "integer", minimum: 1 } },
  required: ["path"],
  additionalProperties: false,
};

/** A heterogeneous array literal: an interface, zod's output and literals of different properties. */
export const specs = [
  { name: "read_logs", description: "Reads a log", parameters: readLogs },
  { name: "restart", description: "Restarts a service", parameters: z.toJSONSchema(z.object({ service: z.string(), force: z.boolean().optional() })) },
  { name: "df", description: "Disk usage", parameters: { type: "object", properties: { mount: { type: "string" } } } },
  { name: "uptime", description: "Uptime", parameters: { type: "object", properties: { host: { type: "string", enum: ["a", "b"] }, since: { type: "number" } }, required: ["host"] } },
];

export async function compileWithSchemas(session: Session): Promise<number> {
  const compiler = new ContextCompiler({ layout: "zoned" });
  const tools: ToolSpec[] = specs;
  const ctx = await compiler.compile(session, 8_000, { tools, format: "openai" });
  // The literal itself, and toolDefinitions of either kind.
  const again = await compiler.compile(session, 8_000, { tools: specs, toolDefinitions: [...specs, { name: "legacy", note: "a plain JSON object" }] });
  const schema: JsonSchemaObject = z.toJSONSchema(z.object({ q: z.string() }));
  await runCompiled("hi", { budget: 4_000, model: () => "ok", tools: [{ name: "search", parameters: schema, timeoutMs: 1_000 }, ...specs] });
  const parameters: JsonSchemaObject | undefined = lookBackToolDefinitions()[0]?.parameters;
  // @ts-expect-error parameters is a JSON Schema object, not a string
  await compiler.compile(session, 8_000, { tools: [{ name: "bad", parameters: "{}" }] });
  // @ts-expect-error a misspelt key of a spec is a type error
  await compiler.compile(session, 8_000, { tools: [{ name: "bad", parameter: readLogs }] });
  const n = ctx.toolTokens + again.toolTokens;
  ctx.free();
  again.free();
  return n + (parameters === undefined ? 0 : 1);
}
