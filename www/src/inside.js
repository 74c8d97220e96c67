// Seeing inside a compile: the ledger as the zones' contents (each part a
// button; its events and why it is there shown below), the prompt-cache bar
// with the cause of the miss, and what the compile left out. Everything
// comes from the run step's `ledger` and `cache`; text goes in through
// textContent only.
import { el } from "./views.js";

const ZONES = ["system", "persistent", "working", "recent"];

/** Why each reason puts a part in the context, in words. */
const INCLUDED = {
  system: "the system prompt, policies and preferences",
  tools: "the tool definitions sent beside the messages",
  pinned: "a first turn, kept in PERSISTENT for the session",
  selected: "a turn the history selection kept",
  recalled: "a turn recalled from earlier in the session",
  summary: "the compaction summary of the turns it folded",
  masked: "a tool output replaced by its summary (light compaction)",
  externalised: "a tool output sent as its artifact's handle and summary",
  memory: "memories",
  goal: "the goal",
  state: "the state digest",
  task: "the task state",
  toolResult: "tool results a processor added",
  placeholder: "the placeholder before a conversation starting with the assistant",
  reasoning: "reasoning sent back to the provider",
  media: "images and files",
};

/** Why each reason leaves something out, in words. */
const EXCLUDED = {
  budget: "dropped or cut to fit the budget",
  compacted: "folded into the compaction summary",
  masked: "tool outputs masked by light compaction",
  refused: "media the provider would refuse",
  window: "turns the history window never reached",
};

/** A short line for an event: its kind and the start of its text. */
function eventLine(event) {
  const d = event.data ?? {};
  const text =
    typeof d === "string" ? d
      : d.text ?? d.content ?? d.result ?? d.error
        ?? (d.tool_name ? `${d.tool_name}(${JSON.stringify(d.arguments ?? {})})` : JSON.stringify(d));
  const line = String(text).replace(/\s+/g, " ");
  return `${event.kind}: ${line.length > 120 ? `${line.slice(0, 120)}…` : line}`;
}

/** Shows `part` (an included or excluded entry) in the detail panel. */
function showPart(detail, part, why, events) {
  detail.replaceChildren();
  const count = part.count ?? part.eventIds.length;
  detail.append(
    el("p", "part-why", `${part.reason}: ${why} · ${part.tokens} tokens${part.zone ? ` in ${part.zone.toUpperCase()}` : ""} · ${count} event${count === 1 ? "" : "s"}`),
  );
  if (part.eventIds.length === 0) {
    detail.append(el("p", "hint", part.count ? "Counted, not listed: the turns before the window." : "No session event stands behind it."));
    return;
  }
  const list = el("ol", "part-events");
  for (const id of part.eventIds) {
    const event = events.get(id);
    list.append(el("li", null, event ? eventLine(event) : `${id} (not in this session)`));
  }
  detail.append(list);
}

/** The ledger's parts grouped by zone, each a button showing its events. */
export function renderLedger(view, { ledger, events }) {
  const byId = new Map(events.map((e) => [e.eventId, e]));
  const zones = view.querySelector("#ledger");
  const detail = view.querySelector("#ledger-detail");
  zones.replaceChildren();
  detail.replaceChildren(el("p", "hint", "Pick a part to see its events and why it is there."));
  for (const zone of ZONES) {
    const parts = ledger.included.filter((p) => p.zone === zone);
    const item = el("li", `ledger-zone ${zone}`);
    const tokens = parts.reduce((n, p) => n + p.tokens, 0);
    item.append(el("span", `key ${zone}`, `${zone}: ${tokens} tokens, ${parts.length} part${parts.length === 1 ? "" : "s"}`));
    const list = el("ul", "parts");
    for (const part of parts) {
      const button = el("button", `part ${part.reason}`, `${part.reason} · ${part.tokens}`);
      button.type = "button";
      // The name starts with the visible text, as WCAG's label-in-name asks.
      button.setAttribute("aria-label", `${part.reason} · ${part.tokens} tokens in ${zone}, ${part.eventIds.length} events`);
      button.addEventListener("click", () => showPart(detail, part, INCLUDED[part.reason] ?? part.reason, byId));
      const entry = el("li", null);
      entry.append(button);
      list.append(entry);
    }
    item.append(list);
    zones.append(item);
  }
  const left = view.querySelector("#excluded");
  left.replaceChildren();
  if (ledger.excluded.length === 0) left.append(el("li", "hint", "Nothing: every turn of the session is in the context."));
  const groups = new Map();
  for (const part of ledger.excluded) groups.set(part.reason, [...(groups.get(part.reason) ?? []), part]);
  for (const [reason, parts] of groups) {
    const merged = {
      reason,
      eventIds: parts.flatMap((p) => p.eventIds),
      tokens: parts.reduce((n, p) => n + p.tokens, 0),
      count: parts.reduce((n, p) => n + (p.count ?? p.eventIds.length), 0),
    };
    const button = el("button", `part excluded ${reason}`, `${reason} · ${merged.count} event${merged.count === 1 ? "" : "s"} · ${merged.tokens} tokens`);
    button.type = "button";
    button.addEventListener("click", () => showPart(detail, merged, EXCLUDED[reason] ?? reason, byId));
    const item = el("li", null);
    item.append(button);
    left.append(item);
  }
}

/** The prompt-cache bar: the prefix repeated from the previous compile against the whole, and what broke it. */
export function renderCache(view, { cache, tokens, messages }) {
  const bar = view.querySelector("#cache-bar");
  const text = view.querySelector("#cache-prefix");
  const miss = view.querySelector("#cache-miss");
  bar.replaceChildren();
  const kept = cache?.prefixTokens ?? 0;
  const share = tokens === 0 ? 0 : Math.min(100, (100 * kept) / tokens);
  const cached = el("span", "cached");
  cached.style.width = `${share}%`;
  bar.append(cached);
  bar.setAttribute("aria-label", `${kept} of ${tokens} tokens repeat from the previous compile`);
  if (!cache || cache.miss?.cause === "first") {
    text.textContent = "Prompt-cache prefix: this is the first compile of this session here.";
  } else {
    text.textContent = `Prompt-cache prefix: the first ${cache.prefixMessages} of ${messages} messages (${kept} tokens) repeat from the previous call.`;
  }
  miss.textContent = !cache?.miss || cache.miss.cause === "first"
    ? (cache?.miss ? "" : "The whole previous context is still the prefix.")
    : `Changed at message ${cache.miss.messageIndex + 1} (${cache.miss.zone.toUpperCase()}): ${cache.miss.cause}, ${cache.miss.detail}.`;
}
