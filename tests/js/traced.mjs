// What the integrations' tracing tests share: a tracer from OpenTelemetry's
// real SDK, with the async-hooks context manager that carries the active
// span across awaits (as an app's setup does), and a span's parent.
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";

/** Runs `fn(tracer)` with a global context manager; resolves to the spans it finished. */
export async function tracedSpans(fn) {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  try {
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer("app");
    await fn(tracer);
    return exporter.getFinishedSpans();
  } finally {
    context.disable();
  }
}

/** The name of the parent of the span named `name` among `spans`. */
export function parentName(spans, name) {
  const child = spans.find((s) => s.name === name);
  return spans.find((s) => s.spanContext().spanId === child?.parentSpanContext?.spanId)?.name;
}
