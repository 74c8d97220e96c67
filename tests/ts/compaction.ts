// The providers' own compaction as their SDKs type it: a `CompactedResponse`
// and a `BetaCompactionBlock` (or the `BetaMessage` holding it) are what
// `recordCompaction` takes, and the Anthropic request, with its `betas`, is
// what `client.beta.messages.create` takes. No cast, no copy.
import { ContextCompiler, HistorySelector, Session } from "agent-context-compiler";
import type { AnthropicRequest } from "agent-context-compiler";
import type OpenAI from "openai";
import type Anthropic from "@anthropic-ai/sdk";

export async function compacted(
  session: Session,
  compact: OpenAI.Responses.CompactedResponse,
  block: Anthropic.Beta.Messages.BetaCompactionBlock,
  reply: Anthropic.Beta.Messages.BetaMessage,
  client: Anthropic,
): Promise<Anthropic.Beta.Messages.BetaMessage> {
  session.recordCompaction(compact, { format: "openai-responses" });
  session.recordCompaction(compact.output, { format: "openai-responses" });
  session.recordCompaction(block, { format: "anthropic" });
  session.recordCompaction(reply, { format: "anthropic" });
  // @ts-expect-error only the providers that compact on their side
  session.recordCompaction(block, { format: "gemini" });
  // @ts-expect-error the format is required
  session.recordCompaction(block);
  const compiler = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector()] });
  const ctx = await compiler.compile(session, 32_000, { format: "anthropic" });
  const request: AnthropicRequest = ctx.toMessages({ format: "anthropic" });
  const betas: Array<"compact-2026-01-12"> | undefined = request.betas;
  return client.beta.messages.create({ model: "claude-sonnet-4-5", max_tokens: 1024, ...request, betas });
}
