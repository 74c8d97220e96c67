// The agent UI: a real agent loop in the tab. Each message runs the library's
// turn runner (runCompiled) over a zoned ContextCompiler, tools through the
// ToolInterruptHandler with the browser tools of ./tools.js, artifacts and
// sessions in IndexedDB; the model is scripted (offline) or an
// OpenAI-compatible endpoint. A tool marked `needsApproval` pauses the run:
// the session holds the pause (so it survives a reload), ./approvals.js asks,
// and a decision resumes the run with `runCompiled(null, { approvals })`.
import {
  ArtifactAttacher,
  Compactor,
  ContextCompiler,
  HistorySelector,
  IndexedDbArtifactStore,
  Session,
  contentId,
  init,
  runCompiled,
} from "agent-context-compiler";
import { openAiModel, scriptedModel } from "./model.js";
import { FileShelf, TOOL_SPECS, makeBridge } from "./tools.js";
import { renderCache, renderLedger } from "./inside.js";
import { holdApprovals, renderApprovals } from "./approvals.js";
import { renderArtifacts, renderContext, renderConversation, renderSessions, showRedacted } from "./views.js";

const SYSTEM_PROMPT = "You are an agent in a browser tab. Use the tools when the user asks; answer briefly.";
const CURRENT_KEY = "acc-www.session";
const $ = (id) => document.getElementById(id);

const shelf = new FileShelf();
let store;
let session;
let busy = false;
/** One compiler for the page: its cache report compares each compile with
 * the previous one of the same session. */
let compiler;

function status(text) {
  $("status").textContent = text;
}

function newSession() {
  session = new Session({ sessionId: `chat-${new Date().toISOString().replace(/[-:.TZ]/g, "").slice(0, 14)}` });
  localStorage.setItem(CURRENT_KEY, session.sessionId);
}

function model() {
  if (document.querySelector('input[name="model"]:checked').value === "scripted") return scriptedModel;
  const baseUrl = $("endpoint-url").value.trim();
  if (!baseUrl) throw new Error("set the endpoint's base URL in Settings");
  return openAiModel({ baseUrl, apiKey: $("endpoint-key").value, model: $("endpoint-model").value.trim() || "gpt-4o-mini" });
}

async function openArtifact(id) {
  const bytes = await store.retrieve(id);
  const dialog = $("artifact-dialog");
  $("artifact-title").textContent = `Artifact ${id.slice(0, 12)}…`;
  if (bytes === null) {
    $("artifact-meta").textContent = "Not in the store.";
    $("artifact-content").textContent = "";
  } else {
    $("artifact-meta").textContent = `${bytes.length} bytes, SHA-256 ${id}; read back verified.`;
    showRedacted($("artifact-content"), new TextDecoder().decode(bytes));
  }
  dialog.showModal();
}

async function verifyArtifact(id) {
  try {
    const bytes = await store.retrieve(id);
    if (bytes === null) return "missing";
    return (await contentId(bytes)) === id ? "verified: content matches its id" : "MISMATCH";
  } catch (e) {
    return `failed: ${e.code ?? ""} ${e.message}`;
  }
}

async function refresh() {
  renderConversation($("conversation"), session.eventLog.events, { openArtifact });
  renderApprovals($("approvals"), session.pendingApprovals(), { decide });
  showFiles();
  renderArtifacts($("artifacts"), await store.listHandles(), { openArtifact, verifyArtifact });
  const ids = await store.listSessions();
  if (!ids.includes(session.sessionId)) ids.unshift(session.sessionId);
  renderSessions($("sessions"), ids, session.sessionId, { resume });
}

/** The status's note on calls still waiting for a decision, or nothing. */
function waiting() {
  const n = session.pendingApprovals().length;
  return n === 0 ? "" : ` ${n} call${n === 1 ? " waits" : "s wait"} for your approval.`;
}

async function resume(id) {
  const loaded = await store.loadSession(id);
  if (loaded === null) {
    status(`Session ${id} is not in the store.`);
    return;
  }
  session = loaded;
  localStorage.setItem(CURRENT_KEY, id);
  status(`Resumed session ${id} (${session.eventLog.length} events).${waiting()}`);
  await refresh();
}

/** The run's options: the same for a new message and for a resume after a decision. */
function runOptions(calls) {
  const ask = model();
  compiler ??= new ContextCompiler({
    layout: "zoned",
    processors: [new HistorySelector({ keepLast: 24 }), new Compactor(), new ArtifactAttacher(store, { thresholdBytes: 1024 })],
  });
  const live = $("live");
  return {
    session,
    compiler,
    budget: Number($("budget").value),
    systemPrompt: SYSTEM_PROMPT,
    tools: TOOL_SPECS,
    bridge: makeBridge(shelf),
    artifactStore: store,
    externalizeThreshold: 1024,
    format: "openai",
    model: (messages, options) => {
      calls.push(messages);
      live.textContent = "";
      return ask(messages, options);
    },
    // The answer as it streams in.
    onDelta: (delta) => {
      if (delta.type !== "text") return;
      live.hidden = false;
      live.textContent += delta.text;
    },
  };
}

/** The last model call's compiled context, in the context panel. */
function showContext(step, budget, messages) {
  const view = $("context-view");
  renderContext(view, { step, budget, messages });
  renderCache(view, { cache: step.cache, tokens: step.budgetUsed, messages: step.messages });
  renderLedger(view, { ledger: step.ledger, events: session.eventLog.events });
  $("context-empty").hidden = true;
  view.hidden = false;
}

/**
 * Runs the agent: on `input`, or with no input and `approvals` (decisions by
 * call id) to resume a run paused for them. The session is saved either way,
 * so a pause survives a reload.
 */
async function run(input, approvals) {
  const calls = [];
  const options = runOptions(calls);
  let result;
  try {
    // A resume syncs after recording its decisions, before running a call:
    // a decision another tab recorded first stands, and this one is superseded.
    const resume = { ...options, approvals, sync: () => session.sync(store) };
    result = await runCompiled(input, approvals ? resume : options);
  } finally {
    // Whatever was recorded (a decision before a failed model call too) is
    // kept, merged with what another tab of the session saved meanwhile.
    await session.sync(store);
  }
  $("live").hidden = true;
  const last = result.steps[result.steps.length - 1];
  if (last) showContext(last, options.budget, calls[calls.length - 1]);
  const superseded = result.superseded?.length ? ` ${result.superseded.length} decision(s) came too late: another was recorded first.` : "";
  if (result.stopReason === "approval") {
    const n = result.pending.length;
    status(`Waiting for your approval: ${n} call${n === 1 ? "" : "s"}.${superseded}`);
  } else {
    const n = result.steps.length;
    const used = last ? `; ${last.budgetUsed} of ${options.budget} tokens` : "";
    status(`Answered in ${n} model call${n === 1 ? "" : "s"}${used}.${superseded}`);
  }
}

/** Runs `work` with the composer and the pending view held, then shows the session again. */
async function busyWith(work) {
  if (busy) return;
  busy = true;
  $("send").disabled = true;
  holdApprovals($("approvals"), true);
  status("Running…");
  try {
    await work();
  } catch (error) {
    status(`Failed: ${error.code ?? ""} ${error.message}`);
  } finally {
    busy = false;
    $("live").hidden = true;
    $("send").disabled = false;
    await refresh();
    if ($("approvals").hidden) $("input").focus();
    else $("approvals-title").focus();
  }
}

/**
 * A person's decision on a waiting call: recorded, and the run resumes. The
 * session is synced first, so a call another tab decided is not decided
 * (or run) again.
 */
function decide(callId, decision) {
  return busyWith(async () => {
    await session.sync(store);
    if (!session.pendingApprovals().some((p) => p.callId === callId)) {
      status("That call was decided elsewhere (another tab); the conversation shows what came of it.");
      return;
    }
    await run(null, { [callId]: decision });
  });
}

/** The files `read_file` can read, under the file picker. */
function showFiles() {
  $("file-list").textContent = `Files: ${shelf.names().join(", ")}. Drop files anywhere on the page to add them.`;
}

function wire() {
  $("composer").addEventListener("submit", async (e) => {
    e.preventDefault();
    const input = $("input").value.trim();
    if (!input || busy) return;
    if (session.pendingApprovals().length > 0) {
      status("Decide the calls waiting for your approval first.");
      $("approvals-title").focus();
      return;
    }
    await busyWith(async () => {
      await run(input);
      $("input").value = "";
    });
  });
  $("input").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      $("composer").requestSubmit();
    }
  });
  for (const radio of document.querySelectorAll('input[name="model"]')) {
    radio.addEventListener("change", () => {
      $("endpoint").hidden = radio.value !== "openai" || !radio.checked;
    });
  }
  for (const id of ["endpoint-url", "endpoint-key", "endpoint-model"]) {
    $(id).value = sessionStorage.getItem(`acc-www.${id}`) ?? "";
    $(id).addEventListener("change", () => sessionStorage.setItem(`acc-www.${id}`, $(id).value));
  }
  $("files").addEventListener("change", async () => {
    await shelf.add($("files").files);
    showFiles();
  });
  document.addEventListener("dragover", (e) => e.preventDefault());
  document.addEventListener("drop", async (e) => {
    e.preventDefault();
    await shelf.add(e.dataTransfer.files);
    showFiles();
  });
  $("new-session").addEventListener("click", async () => {
    newSession();
    status(`New session ${session.sessionId}.`);
    await refresh();
  });
}

async function start() {
  // The page uses sessions and an IndexedDB store: the main module and the stores.
  await init({ modules: ["stores"] });
  store = await IndexedDbArtifactStore.open({ databaseName: "agent-context-compiler-www" });
  wire();
  const last = localStorage.getItem(CURRENT_KEY);
  const loaded = last === null ? null : await store.loadSession(last);
  if (loaded !== null) {
    session = loaded;
    status(`Resumed session ${session.sessionId} (${session.eventLog.length} events).${waiting()}`);
  } else {
    newSession();
    status("Ready. The model is scripted: try “fetch /sample/build.log”.");
  }
  await refresh();
  document.body.dataset.ready = "true";
}

start().catch((e) => status(`Could not start: ${e.code ?? ""} ${e.message}`));
