// The models the page can run: a deterministic scripted model (the default,
// offline) and an OpenAI-compatible chat completions endpoint. Both take the
// compiled messages in OpenAI's shape, as runCompiled hands them over, and
// stream their answers: runCompiled reads the stream and the page shows each
// piece as it comes.

/** The last message's text, whatever its role. */
const textOf = (message) => (typeof message?.content === "string" ? message.content : "");

/**
 * The scripted model: reads the last user message and asks for the tool it
 * names; once the tool results are back, answers from them.
 */
export function scriptedModel(messages) {
  const last = messages[messages.length - 1];
  if (last?.role === "tool") {
    const results = [];
    for (let i = messages.length - 1; i >= 0 && messages[i].role === "tool"; i--) results.unshift(textOf(messages[i]));
    return streamed(results.map(describe).join(" "));
  }
  const request = [...messages].reverse().find((m) => m.role === "user");
  const text = textOf(request).toLowerCase();
  const calls = [];
  const url = textOf(request).match(/(https?:\/\/\S+|\/\S+\.\w+)/);
  if (/\bfetch\b/.test(text) && url) calls.push({ name: "fetch_url", arguments: { url: url[1] } });
  const file = textOf(request).match(/\bread\s+(\S+)/i);
  if (file) calls.push({ name: "read_file", arguments: { name: file[1] } });
  const write = textOf(request).match(/\bwrite\s+(\S+)\s+([^]+)/i);
  if (write) calls.push({ name: "write_file", arguments: { name: write[1], text: write[2].trim() } });
  if (/\bslow\b/.test(text)) calls.push({ name: "slow_tool", arguments: { seconds: 5 } });
  if (/\bbroken\b/.test(text)) calls.push({ name: "broken_tool", arguments: {} });
  if (calls.length > 0) return { toolCalls: calls };
  return streamed(
    "I can fetch a URL (fetch /sample/build.log), read a file (read config.env), write one once you approve (write notes.txt some text), run a slow tool that times out, or use a broken tool.",
  );
}

/** `text` a word at a time, as a model streams it. */
async function* streamed(text) {
  for (const word of text.match(/\S+\s*/g) ?? []) {
    await new Promise((resolve) => setTimeout(resolve, 15));
    yield word;
  }
}

/** The JSON chunks of a server-sent event stream (`data: …` lines, up to `[DONE]`). */
async function* serverSentChunks(body) {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const bytes of body) {
    buffered += decoder.decode(bytes, { stream: true });
    let end;
    while ((end = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, end).trim();
      buffered = buffered.slice(end + 1);
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (data === "[DONE]") return;
      yield JSON.parse(data);
    }
  }
}

/** One sentence about one tool result, as the model saw it. */
function describe(result) {
  const artifact = result.match(/\[artifact ([0-9a-f]{12})/);
  if (artifact) return `The output was large, so it is stored as artifact ${artifact[1]}…; the context holds its summary.`;
  if (/timed out/.test(result)) return "The tool timed out.";
  if (/^wrote \d+ characters to /.test(result)) return `Done: ${result}.`;
  if (/\brejected\b/i.test(result)) return `You rejected the call: ${result.slice(0, 200)}`;
  if (/^error|failed/i.test(result)) return `The tool failed: ${result.slice(0, 120)}`;
  const redactions = result.match(/\[REDACTED:[\w-]+\]/g) ?? [];
  const lines = result.split("\n").length;
  return redactions.length > 0
    ? `Read ${lines} lines; ${redactions.length} secrets were redacted before I saw them.`
    : `Read ${lines} lines: ${result.slice(0, 80)}`;
}

/** A model on an OpenAI-compatible `/chat/completions` endpoint. */
export function openAiModel({ baseUrl, apiKey, model }) {
  return async (messages, { tools, signal }) => {
    const response = await fetch(`${baseUrl.replace(/\/$/, "")}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ model, messages, tools: tools.length > 0 ? tools : undefined, stream: true, stream_options: { include_usage: true } }),
      signal,
    });
    if (!response.ok) throw new Error(`the endpoint answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
    // Chat Completions chunks: runCompiled reads them, tool calls included.
    return serverSentChunks(response.body);
  };
}
