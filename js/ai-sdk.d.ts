// agent-context-compiler/ai-sdk: what the Vercel AI SDK needs from this
// package (`ai` is an optional peer dependency).
import type { ToolSet } from "ai";

/** A tool a run offers: its name, what it does, and its arguments' JSON Schema. */
export interface AiSdkToolSpec {
  name: string;
  description?: string;
  parameters: { [key: string]: unknown };
}

/**
 * The tools a run offers (as `runCompiled` hands them to its model in the
 * `ai-sdk` format) as an AI SDK `ToolSet`: each schema wrapped with
 * `jsonSchema()`, and no `execute`, so that the SDK returns the calls and the
 * run records and runs them. Throws `INVALID_ARGUMENT` for a spec without a
 * name or schema, or two with one name.
 */
export function aiSdkTools(specs: ReadonlyArray<AiSdkToolSpec>): ToolSet;
