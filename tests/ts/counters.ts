// Token counters of your own and the exact tokenizers, type-checked.
import { ContextWindow, EventLog, MemoryArtifactStore, Session, type SessionEvent, type TokenCounter } from "agent-context-compiler";
import { MESSAGE_OVERHEAD, loadTokenizer, loadTokenizerSync, type Encoding, type Tokenizer } from "agent-context-compiler/tokenizers";

export async function counters(): Promise<number> {
  const o200k: Tokenizer = await loadTokenizer("o200k_base");
  const cl100k: Tokenizer = loadTokenizerSync("cl100k_base");
  const encoding: Encoding = o200k.encoding;
  const asCounter: TokenCounter = cl100k;
  const session = new Session({ tokenCounter: o200k });
  const log = new EventLog({ tokenCounter: (text: string) => text.length });
  const window = new ContextWindow({ maxContextTokens: 8000, tokenCounter: { count: (t) => t.length, messageOverhead: 3 } });
  const back = await new MemoryArtifactStore().loadSession("s", { tokenCounter: asCounter });
  const event: SessionEvent = session.record("user_input", { text: encoding });
  log.append("note", [1, 2, 3]);
  window.appendMessage("user", "hi");
  // @ts-expect-error: a counter answers a number
  new Session({ tokenCounter: (text: string) => text });
  // @ts-expect-error: only the shipped encodings
  await loadTokenizer("p50k_base");
  // @ts-expect-error: count takes text
  o200k.count(42);
  return event.tokenEstimate + MESSAGE_OVERHEAD + (back ? 1 : 0);
}
