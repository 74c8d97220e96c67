// Asking before a tool runs: the calls a run left waiting for a person
// (`result.pending`, or `session.pendingApprovals()` after a reload), each
// with Approve, Reject (with a reason) and Edit (the arguments as JSON,
// checked before anything is sent). A decision goes to `decide(callId,
// decision)`, which resumes the run. Text goes in through textContent only.
import { el, showRedacted } from "./views.js";

/** Edited arguments as typed: `{ args }` for a JSON object, else `{ error }` saying what is wrong. */
export function parseArguments(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { error: `Not valid JSON: ${e.message}` };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { error: 'The arguments must be a JSON object, like {"name": "notes.txt", "text": "…"}.' };
  }
  return { args: value };
}

/** A button of `type` whose accessible name starts with its visible text (WCAG's label-in-name). */
function button(text, label, type = "button") {
  const node = el("button", null, text);
  node.type = type;
  node.setAttribute("aria-label", label);
  return node;
}

/** A labelled field: `<label>` and `control` joined by the control's id. */
function field(labelText, control, id) {
  control.id = id;
  const label = el("label", null, labelText);
  label.htmlFor = id;
  return [label, control];
}

/** The reject form: an optional reason, then `{ approve: false, reason }`. */
function rejectForm(call, key, decide) {
  const form = el("form", "reject");
  const reason = el("input");
  reason.type = "text";
  reason.autocomplete = "off";
  form.append(...field(`Reason for rejecting ${call.name} (the model gets it)`, reason, `reason-${key}`));
  form.append(button("Reject", `Reject ${call.name}`, "submit"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = reason.value.trim();
    decide(call.callId, text ? { approve: false, reason: text } : { approve: false });
  });
  return form;
}

/** The edit form (hidden until Edit opens it): the arguments as JSON, sent only when they parse to an object. */
function editForm(call, key, decide) {
  const form = el("form", "edit");
  form.id = `edit-${key}`;
  form.hidden = true;
  const args = el("textarea");
  args.rows = 4;
  args.spellcheck = false;
  args.value = JSON.stringify(call.arguments ?? {}, null, 2);
  const error = el("p", "field-error");
  error.id = `edit-error-${key}`;
  error.setAttribute("aria-live", "assertive");
  args.setAttribute("aria-describedby", error.id);
  form.append(...field(`Arguments of ${call.name} (JSON)`, args, `args-${key}`), error);
  form.append(button("Run with these arguments", `Run with these arguments: ${call.name}`, "submit"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const parsed = parseArguments(args.value);
    if (parsed.error) {
      error.textContent = parsed.error;
      args.setAttribute("aria-invalid", "true");
      args.focus();
      return;
    }
    error.textContent = "";
    args.removeAttribute("aria-invalid");
    decide(call.callId, { approve: true, args: parsed.args });
  });
  return form;
}

/** One waiting call: its tool and redacted arguments, and the three ways to decide it. */
function pendingCall(call, key, decide) {
  const item = el("li", "pending-call");
  item.dataset.callId = call.callId;
  item.append(el("p", "tool-name", `${call.name} wants to run with:`));
  const args = el("pre", "output arguments");
  args.tabIndex = 0;
  args.setAttribute("aria-label", `arguments of ${call.name}`);
  showRedacted(args, JSON.stringify(call.arguments ?? {}, null, 2));
  item.append(args);
  const edit = editForm(call, key, decide);
  const actions = el("div", "decide");
  const approve = button("Approve", `Approve ${call.name}`);
  approve.classList.add("approve");
  approve.addEventListener("click", () => decide(call.callId, { approve: true }));
  const open = button("Edit", `Edit ${call.name}`);
  open.classList.add("open-edit");
  open.setAttribute("aria-expanded", "false");
  open.setAttribute("aria-controls", edit.id);
  open.addEventListener("click", () => {
    edit.hidden = !edit.hidden;
    open.setAttribute("aria-expanded", String(!edit.hidden));
    if (!edit.hidden) edit.querySelector("textarea").focus();
  });
  actions.append(approve, open);
  item.append(actions, edit, rejectForm(call, key, decide));
  return item;
}

/**
 * Shows `pending` (`{ callId, name, arguments }[]`) in `section` (hidden when
 * nothing waits); `focus` moves the keyboard to its heading.
 */
export function renderApprovals(section, pending, { decide, focus = false }) {
  const list = section.querySelector("ol");
  list.replaceChildren();
  pending.forEach((call, i) => list.append(pendingCall(call, i + 1, decide)));
  section.hidden = pending.length === 0;
  if (focus && pending.length > 0) section.querySelector("h3").focus();
}

/** Disables (or enables again) every control of the pending view while a decision runs. */
export function holdApprovals(section, held) {
  for (const control of section.querySelectorAll("button, input, textarea")) control.disabled = held;
}
