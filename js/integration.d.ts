// What the framework integrations' options share.

/** The options every integration takes besides its session: the compiler
 * and budget of every model call, the store synced after every step, and the
 * compile's own options. */
export interface IntegrationOptions<Context> {
  /** Compiles every model call (the recommended pipeline in the zoned layout). */
  compiler: { compile(session: never, budget: number, options?: object): Promise<Context> };
  /** The token budget of every model call: a positive integer or a `TokenBudget`. */
  budget: number | object;
  /** Synced after every step (`session.sync(store)`). */
  store?: object;
  /** The system prompt; by default the framework's own (its system messages, the agent's instructions). */
  systemPrompt?: string;
  goal?: string;
  policies?: string[];
  userPreferences?: string[];
  stateDigest?: unknown;
  taskState?: string;
  reserveOutput?: number;
  usageMargin?: number;
  model?: string;
}
