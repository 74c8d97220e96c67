// The event bus's types, checked by `tsc --noEmit` with the other consumers.
import { EpisodeSummarizer, EventBus, FactExtractor, InMemoryBackend, KvArtifactStore, Session, SessionTimeoutMonitor, SleepHandler, type BusEvent, type BusStats, type ContextCompilerError, type MemoryEntry, type PersistentMemory } from "agent-context-compiler";

export async function useBus(): Promise<number> {
  const bus = new EventBus({
    maxQueue: 10,
    handlerTimeoutMs: 1000,
    onError: (error: ContextCompilerError, handler: string, event: BusEvent) => void [error.code, handler, event.type],
  });
  const off: () => boolean = bus.on("session_ended", async (e: BusEvent) => {
    const id: string | null = e.sessionId;
    void id;
  }, "summarizer");
  bus.setPersister((e) => void e.timestamp);
  bus.setPersister(null);
  bus.start();
  const accepted: boolean = await bus.emit({ type: "turn_completed", agentId: "a", data: { idle_seconds: 3 } });
  await bus.stop();
  const stats: BusStats = bus.stats;
  // @ts-expect-error an event needs an agentId
  await bus.emit({ type: "x" });
  // @ts-expect-error handlers take one event
  bus.on("x", (a: BusEvent, b: number) => void [a, b]);
  off();
  const monitor = new SessionTimeoutMonitor({ bus, sessionIdleTimeoutMs: 1000, clock: { now: () => 0 } });
  monitor.start();
  const ended: BusEvent[] = monitor.checkTimeouts();
  monitor.stop();
  const summarizer = new EpisodeSummarizer({ bus, llm: async (prompt, { maxTokens }) => `${prompt.length}${maxTokens}`, maxTranscriptChars: 8000 });
  const detached: boolean = summarizer.detach();
  new EpisodeSummarizer({ bus, llm: { complete: (p: string) => p } });
  // @ts-expect-error the model returns text
  new EpisodeSummarizer({ bus, llm: async () => 42 });
  void detached;
  // @ts-expect-error the monitor needs a bus
  new SessionTimeoutMonitor({ checkIntervalMs: 5 });
  const memory = new InMemoryBackend();
  memory.put({ key: "k", content: "v", subject: "user", confidence: 0.9 });
  const listed: MemoryEntry[] = memory.list({ subject: "user" });
  const store = new KvArtifactStore({ get: async () => null, put: async () => {}, delete: async () => {} });
  const persisted: PersistentMemory = await store.openMemory("memory");
  await persisted.put({ key: "k", content: "v" });
  const removed: boolean = await persisted.delete("k");
  const extractor = new FactExtractor({ bus, memory: persisted, llm: async (p, { signal }) => String(signal?.aborted ?? p), embed: async (t: string) => [t.length], maxFacts: 3 });
  new FactExtractor({ bus, memory: { recall: () => [], put: () => {}, delete: () => true, list: () => [] }, llm: { complete: (p: string) => p } });
  // @ts-expect-error the extractor writes, so recall alone is not enough
  new FactExtractor({ bus, memory: { recall: () => [] }, llm: (p: string) => p });
  const sleep = new SleepHandler({ bus, memory, llm: async () => "{}", keepCategories: ["core"], pruneAfterMs: 1000 });
  // @ts-expect-error keepCategories is a list
  new SleepHandler({ bus, memory, llm: async () => "{}", keepCategories: "core" });
  const session = new Session();
  session.attachBus(bus, { agentId: "nous", userId: "u-1", episodeId: "ep-1" });
  // @ts-expect-error the user id is a string
  session.attachBus(bus, { userId: 5 });
  session.detachBus();
  void [listed, removed, extractor.detach(), sleep.detach()];
  return ended.length + monitor.tracked + (accepted ? 1 : 0) + stats.dispatched + bus.pending + Number(bus.running);
}
