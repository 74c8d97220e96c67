// The first compile the cold-start test and benches time: three turns, the
// zoned layout, OpenAI messages. It takes the package's exports as an
// argument, so importing it loads nothing of the package (each caller
// imports this before it starts timing or watching what loads).

/** A session of three turns compiled once with `pkg`'s classes; the OpenAI messages. */
export async function firstCompile({ ContextCompiler, HistorySelector, Session }) {
  const s = new Session();
  s.record("user_input", "Why did the nightly job fail?");
  s.record("assistant_output", "The disk was full.");
  s.record("user_input", "And now?");
  const c = new ContextCompiler({ layout: "zoned", processors: [new HistorySelector()] });
  const ctx = await c.compile(s, 4000, { systemPrompt: "You are an SRE." });
  return ctx.toMessages({ format: "openai" });
}
