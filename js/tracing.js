// OpenTelemetry contexts without OpenTelemetry: the package imports nothing
// of it, so the context a child span is started in is made here. The key
// is the one `@opentelemetry/api` uses for the active span
// (`createContextKey` is `Symbol.for`), so every API version reads it.

const SPAN_KEY = Symbol.for("OpenTelemetry Context Key SPAN");

/** An immutable OpenTelemetry `Context`: `getValue`, `setValue`, `deleteValue`. */
class TraceContext {
  #values;
  constructor(values) {
    this.#values = values;
  }
  getValue(key) {
    return this.#values.get(key);
  }
  setValue(key, value) {
    const values = new Map(this.#values);
    values.set(key, value);
    return new TraceContext(values);
  }
  deleteValue(key) {
    const values = new Map(this.#values);
    values.delete(key);
    return new TraceContext(values);
  }
}

/** A context whose span is `span`: what a child of `span` is started in. */
export function traceContext(span) {
  return new TraceContext(new Map([[SPAN_KEY, span]]));
}
