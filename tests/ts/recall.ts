// HistoryRecall's embedder under --strict: it is told each batch's role,
// and a function of one parameter (a model without prefixes) still fits.
import { HistoryRecall, type EmbedRole, type EmbedTextsFunction } from "agent-context-compiler";

export function recallers(): HistoryRecall[] {
  const prefixed: EmbedTextsFunction = async (texts, { role }) => {
    const prefix: "query: " | "passage: " = role === "query" ? "query: " : "passage: ";
    return texts.map((t) => new Float32Array([(prefix + t).length, 1]));
  };
  const plain = async (texts: string[]) => texts.map((t) => [t.length, 1]);
  const roles: EmbedRole[] = ["query", "passage"];
  // @ts-expect-error a role is "query" or "passage"
  const wrong: EmbedRole = "document";
  void wrong;
  return [
    new HistoryRecall({ embedder: prefixed, embedderTimeoutMs: 5_000 }),
    new HistoryRecall({ embedder: plain }),
    new HistoryRecall({ embedder: { embed: prefixed } }),
    ...roles.map(() => new HistoryRecall()),
  ];
}
