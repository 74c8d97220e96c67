// The event bus's types, checked by `tsc --noEmit` with the other consumers.
import { EpisodeSummarizer, EventBus, SessionTimeoutMonitor, type BusEvent, type BusStats, type ContextCompilerError } from "agent-context-compiler";

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
  return ended.length + monitor.tracked + (accepted ? 1 : 0) + stats.dispatched + bus.pending + Number(bus.running);
}
