// Rendering: the conversation and its tool timeline from the session's
// events, the compiled context of the last model call, and the stores'
// listings. Text goes in through textContent only.

const MARKER = /\[REDACTED:([\w-]+)\]/g;

/** Creates an element with a class and text. */
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The redactions in a redacted text: each marker's rule and line. */
export function redactionsIn(text) {
  const found = [];
  for (const m of text.matchAll(MARKER)) found.push({ rule: m[1], line: text.slice(0, m.index).split("\n").length });
  return found;
}

/** A <pre> for an output; focusable, so a long one scrolls from the keyboard. */
function outputBlock(label) {
  const pre = el("pre", "output");
  pre.tabIndex = 0;
  pre.setAttribute("aria-label", label);
  return pre;
}

/** Fills `pre` with `text`, its redaction markers as <mark>s naming the rule. */
export function showRedacted(pre, text) {
  pre.replaceChildren();
  let at = 0;
  for (const m of text.matchAll(MARKER)) {
    pre.append(text.slice(at, m.index));
    const mark = el("mark", "redaction", m[0]);
    mark.title = `redacted by rule ${m[1]}`;
    pre.append(mark);
    at = m.index + m[0].length;
  }
  pre.append(text.slice(at));
}

const OUTCOMES = { tool_success: "success", tool_error: "error", tool_timeout: "timeout" };

/** A tool call's row head: the call as `name(arguments)` and its state. */
function callHead(row, name, args, state) {
  row.querySelector(".tool-head")?.remove();
  const head = el("div", "tool-head");
  head.append(el("span", "tool-name", `${name}(${JSON.stringify(args ?? {})})`), el("span", "outcome", state));
  row.prepend(head);
}

/** A person's decision on a call, on its row: approved, edited (the arguments it ran with) or rejected. */
function fillDecision(row, data) {
  row.dataset.decision = data.approve === false ? "rejected" : data.arguments !== undefined ? "edited" : "approved";
  if (row.dataset.decision === "edited") {
    callHead(row, row.dataset.tool, data.arguments, "edited, approved");
    row.append(el("p", "decision", `Edited before it ran; asked for ${JSON.stringify(data.original_arguments ?? {})}.`));
  } else {
    row.querySelector(".outcome").textContent = row.dataset.decision;
    if (data.reason) row.append(el("p", "decision", `Rejected: ${data.reason}`));
  }
}

/**
 * The conversation: user and assistant turns, and a timeline row per tool
 * call (call, approval, outcome, latency, redactions, artifact), an outcome
 * or a decision joining the call it names.
 */
export function renderConversation(list, events, { openArtifact }) {
  list.replaceChildren();
  const waiting = [];
  for (const event of events) {
    const data = event.data ?? {};
    if (event.kind === "user_input" || event.kind === "assistant_output") {
      const item = el("li", `turn ${event.kind === "user_input" ? "user" : "assistant"}`);
      item.append(el("span", "who", event.kind === "user_input" ? "You" : "Agent"), el("p", "text", String(data.text ?? "")));
      list.append(item);
    } else if (event.kind === "tool_call") {
      const row = el("li", "tool pending");
      row.dataset.tool = data.tool_name;
      row.dataset.callId = data.call_id ?? event.eventId;
      callHead(row, data.tool_name, data.arguments, "called");
      list.append(row);
      waiting.push(row);
    } else if (event.kind === "approval_requested") {
      const row = waiting.find((r) => r.dataset.callId === data.call_id);
      if (row) row.querySelector(".outcome").textContent = "waiting for approval";
    } else if (event.kind === "approval_decided") {
      // The first decision stands; a later one for the same call was superseded.
      const row = waiting.find((r) => r.dataset.callId === data.call_id && !r.dataset.decision);
      if (row) fillDecision(row, data);
    } else if (event.kind in OUTCOMES) {
      let index = waiting.findIndex((r) => data.call_id !== undefined && r.dataset.callId === data.call_id);
      if (index < 0) index = waiting.findIndex((r) => r.dataset.tool === data.tool);
      const row = index >= 0 ? waiting.splice(index, 1)[0] : list.appendChild(el("li", "tool"));
      fillOutcome(row, OUTCOMES[event.kind], data, openArtifact);
    } else if (event.kind === "context_compacted") {
      list.append(el("li", "note", "Earlier conversation compacted into a summary."));
    }
  }
  list.scrollTop = list.scrollHeight;
}

function fillOutcome(row, outcome, data, openArtifact) {
  const rejected = row.dataset.decision === "rejected";
  row.className = `tool ${rejected ? "rejected" : outcome}`;
  const state = row.querySelector(".outcome") ?? row.appendChild(el("span", "outcome"));
  state.textContent = rejected ? "rejected" : `${outcome} · ${data.latency_ms ?? "?"} ms`;
  const text = String(data.error ?? data.output ?? data.result ?? data.summary ?? "");
  const redactions = redactionsIn(text);
  if (redactions.length > 0) {
    row.append(el("p", "redactions", `${redactions.length} redacted: ${redactions.map((r) => `${r.rule} (line ${r.line})`).join(", ")}`));
  }
  if (data.handle) {
    const link = el("button", "link", `artifact ${data.handle.slice(0, 12)}… (${data.size_bytes} bytes)`);
    link.type = "button";
    link.addEventListener("click", () => openArtifact(data.handle));
    row.append(link);
  }
  const pre = outputBlock(`output of ${row.dataset.tool ?? "the tool"}`);
  showRedacted(pre, text.length > 600 ? `${text.slice(0, 600)}…` : text);
  row.append(pre);
}

const ZONES = ["system", "persistent", "working", "recent"];

/** The last call's context: zones against the budget, compaction, the messages (the cached prefix marked). */
export function renderContext(view, { step, budget, messages }) {
  view.querySelector("#context-tokens").textContent = `${step.budgetUsed} of ${budget} tokens`;
  view.querySelector("#context-compaction").textContent = step.compactionLevel;
  const bar = view.querySelector("#zonebar");
  bar.replaceChildren();
  bar.setAttribute("aria-label", ZONES.map((z) => `${z} ${step.zoneUsage[z]} tokens`).join(", ") + `, of a ${budget}-token budget`);
  const legend = view.querySelector("#zone-legend");
  legend.replaceChildren();
  for (const zone of ZONES) {
    const part = el("span", `zone ${zone}`);
    part.style.width = `${(100 * step.zoneUsage[zone]) / budget}%`;
    bar.append(part);
    const key = el("li", `key ${zone}`, `${zone}: ${step.zoneUsage[zone]}`);
    legend.append(key);
  }
  const same = step.cache?.miss?.cause === "first" ? 0 : (step.cache?.prefixMessages ?? 0);
  view.querySelector("#message-count").textContent = `${messages.length}`;
  const list = view.querySelector("#messages");
  list.replaceChildren();
  messages.forEach((m, i) => {
    const item = el("li", i < same ? "message cached" : "message");
    const pre = outputBlock(`message ${i + 1}, ${m.role}`);
    showRedacted(pre, JSON.stringify(m, null, 2));
    item.append(el("span", "role", m.role + (i < same ? " (cached prefix)" : "")), pre);
    list.append(item);
  });
}

/** The artifact table: id, size, summary, open and verify buttons. */
export function renderArtifacts(body, handles, { openArtifact, verifyArtifact }) {
  body.replaceChildren();
  for (const h of handles) {
    const row = el("tr");
    row.dataset.id = h.artifactId;
    const summary = h.summary.length > 80 ? `${h.summary.slice(0, 80)}…` : h.summary;
    row.append(el("td", "id", `${h.artifactId.slice(0, 12)}…`), el("td", null, `${h.sizeBytes} B`), el("td", "summary", summary));
    const actions = el("td", "actions");
    const open = el("button", null, "Open");
    open.type = "button";
    open.setAttribute("aria-label", `Open artifact ${h.artifactId.slice(0, 12)}`);
    open.addEventListener("click", () => openArtifact(h.artifactId));
    const verify = el("button", null, "Verify");
    verify.type = "button";
    verify.setAttribute("aria-label", `Verify artifact ${h.artifactId.slice(0, 12)}`);
    const result = el("span", "verdict");
    result.setAttribute("role", "status");
    verify.addEventListener("click", async () => {
      result.textContent = await verifyArtifact(h.artifactId);
    });
    actions.append(open, verify, result);
    row.append(actions);
    body.append(row);
  }
}

/** The stored sessions, each with a resume button; the current one marked. */
export function renderSessions(list, ids, current, { resume }) {
  list.replaceChildren();
  for (const id of ids) {
    const item = el("li", id === current ? "current" : null);
    item.append(el("span", "session-id", id + (id === current ? " (open)" : "")));
    if (id !== current) {
      const button = el("button", null, "Resume");
      button.type = "button";
      button.setAttribute("aria-label", `Resume session ${id}`);
      button.addEventListener("click", () => resume(id));
      item.append(button);
    }
    list.append(item);
  }
}
