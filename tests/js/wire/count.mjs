// Token counts of what a provider request sends, with o200k_base.
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";

// Special-token text such as "<|endoftext|>" is counted as ordinary text.
const OPTIONS = { disallowedSpecial: new Set() };

/** The o200k_base token count of a string (special tokens counted as plain text). */
export function tokens(text) {
  return text ? countTokens(String(text), OPTIONS) : 0;
}

const json = (v) => (typeof v === "string" ? v : JSON.stringify(v ?? {}));

/** The text of a content value: a string, or the text-like parts of a part list. */
function partsText(content, out) {
  if (content == null) return;
  if (typeof content === "string") return void out.push(content);
  if (!Array.isArray(content)) return;
  for (const p of content) {
    if (typeof p === "string") out.push(p);
    else if (p && typeof p === "object") {
      // text, input_text, output_text, summary_text: .text; refusal: .refusal;
      // Anthropic thinking: .thinking; nested tool_result / search_result content.
      if (typeof p.text === "string") out.push(p.text);
      if (typeof p.refusal === "string") out.push(p.refusal);
      if (typeof p.thinking === "string") out.push(p.thinking);
      if (p.type === "tool_result" || p.type === "search_result") partsText(p.content, out);
    }
  }
}

/** A tool definition as counted: its name, description and parameter schema. */
function toolText(api, t) {
  if (api === "openai-chat") {
    const f = t.function ?? t.custom ?? {};
    return [f.name, f.description, f.parameters ? json(f.parameters) : f.format ? json(f.format) : ""];
  }
  if (api === "anthropic") return [t.name, t.description, t.input_schema ? json(t.input_schema) : ""];
  return [t.name, t.description, t.parameters ? json(t.parameters) : ""];
}

/**
 * Counts the o200k_base tokens of what a request body sends, by part.
 * Counted: `system` (Chat Completions system/developer messages, Responses
 * `instructions` and system/developer input messages, Anthropic `system`);
 * `messages` (every other message/input item: text, input_text, output_text
 * and refusal parts, Anthropic thinking text, tool call names and their
 * arguments as JSON text (Anthropic `tool_use.input` JSON-stringified), tool
 * results' text, Responses reasoning summaries); `tools` (each tool
 * definition's name, description and JSON-stringified parameter schema).
 * Not counted: images, audio and files, encrypted reasoning/signatures, ids,
 * role and type names, per-message framing, request options (model,
 * temperature...). `total` is the sum of the three.
 * @param {object} body the request body (or a captured request `{ api, body }`)
 * @param {"openai-chat"|"openai-responses"|"anthropic"} [api]
 * @returns {{ total: number, system: number, messages: number, tools: number }}
 */
export function counted(body, api) {
  if (api === undefined && body && typeof body.api === "string" && body.body) ({ api, body } = body);
  const system = [];
  const messages = [];
  if (api === "openai-chat") {
    for (const m of body.messages ?? []) {
      const out = m.role === "system" || m.role === "developer" ? system : messages;
      partsText(m.content, out);
      if (typeof m.refusal === "string") out.push(m.refusal);
      for (const c of m.tool_calls ?? []) {
        if (c.function) out.push(c.function.name, c.function.arguments);
        if (c.custom) out.push(c.custom.name, c.custom.input);
      }
      if (m.function_call) out.push(m.function_call.name, m.function_call.arguments);
    }
  } else if (api === "openai-responses") {
    if (typeof body.instructions === "string") system.push(body.instructions);
    const input = typeof body.input === "string" ? [{ role: "user", content: body.input }] : body.input ?? [];
    for (const item of input) {
      const out = item.role === "system" || item.role === "developer" ? system : messages;
      switch (item.type ?? "message") {
        case "message":
          partsText(item.content, out);
          break;
        case "function_call":
          out.push(item.name, item.arguments);
          break;
        case "custom_tool_call":
          out.push(item.name, item.input);
          break;
        case "function_call_output":
        case "custom_tool_call_output":
          partsText(item.output, out);
          break;
        case "reasoning":
          partsText(item.summary, out);
          partsText(item.content, out);
          break;
        default:
          break;
      }
    }
  } else if (api === "anthropic") {
    partsText(body.system, system);
    for (const m of body.messages ?? []) {
      const out = m.role === "system" ? system : messages;
      partsText(m.content, out);
      if (Array.isArray(m.content)) {
        for (const b of m.content) if (b?.type === "tool_use" || b?.type === "server_tool_use") out.push(b.name, json(b.input));
      }
    }
  } else {
    throw new Error(`counted: unknown api ${api}`);
  }
  const toolTexts = (body.tools ?? []).flatMap((t) => toolText(api, t));
  const sum = (list) => list.reduce((n, s) => n + tokens(s), 0);
  const result = { system: sum(system), messages: sum(messages), tools: sum(toolTexts) };
  return { total: result.system + result.messages + result.tools, ...result };
}
