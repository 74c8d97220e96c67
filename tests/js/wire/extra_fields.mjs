// The request-body checker: every key a body sends that the provider's own
// request type does not declare (see request_keys.mjs).
import { REQUEST_KEYS } from "./request_keys.mjs";

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/** Whether `value` fits a shape's tag (its literal `type` / `role` values; null: may be absent). */
function fitsTag(shape, value) {
  for (const [k, allowed] of Object.entries(shape.tag ?? {})) {
    if (!allowed.includes(value[k] ?? null)) return false;
  }
  return true;
}

/**
 * The union members an object may be: those whose tag it fits, preferring the
 * ones declaring every discriminant key (`type`, `role`) the object has, so a
 * type-less user message is not taken for an `item_reference`.
 */
function candidates(shapes, names, value) {
  const fit = names.map((n) => shapes[n]).filter((s) => fitsTag(s, value));
  const strict = fit.filter((s) => ["type", "role"].every((k) => !(k in value) || k in s.keys));
  return strict.length ? strict : fit;
}

function check(shapes, ref, value, path, out) {
  if (ref === 0 || value == null) return;
  if (Array.isArray(value)) {
    value.forEach((v, i) => check(shapes, ref, v, `${path}[${i}]`, out));
    return;
  }
  if (!isObject(value)) return; // a string content, a number...: nothing to check
  const names = Array.isArray(ref) ? ref : [ref];
  const fit = candidates(shapes, names, value);
  if (fit.length === 0) {
    const tags = [...new Set(names.flatMap((n) => Object.keys(shapes[n].tag ?? {})))];
    const key = tags.find((k) => k in value) ?? tags[0] ?? "type";
    out.push({ path, key, reason: `no declared variant with ${key}=${JSON.stringify(value[key])}` });
    return;
  }
  for (const [k, v] of Object.entries(value)) {
    const declared = fit.filter((s) => k in s.keys);
    if (declared.length === 0) {
      out.push({ path, key: k, reason: "not declared" });
      continue;
    }
    const refs = declared.map((s) => s.keys[k]);
    if (refs.includes(0)) continue;
    check(shapes, [...new Set(refs.flat())], v, path ? `${path}.${k}` : k, out);
  }
}

/** The key set of `api`; Anthropic's by the API version the request speaks. */
function keySet(api, anthropicVersion) {
  if (api === "anthropic" && anthropicVersion === "2023-06-01") return "anthropic-2023-06-01";
  return api;
}

/**
 * Every key of a request body its provider's request type does not declare:
 * top-level keys, each message / input item by its role and type, each
 * content part by its type, each tool definition, and the objects nested in
 * those (tool_calls, cache_control, image sources...), down to the free-form
 * values (JSON schemas, metadata, tool inputs) the types leave open. An
 * object whose `type`/`role` matches no declared variant is reported once,
 * with the discriminant as `key`. Keys whose value is `undefined` do not
 * count (JSON drops them).
 *
 * Called as `extraFields(api, body)`, Anthropic bodies are checked against
 * the top-level @anthropic-ai/sdk (1.x, API version 2026-10-21, which has no
 * temperature / top_p / top_k); pass `{ anthropicVersion: "2023-06-01" }`, or
 * call `extraFields(request)` with a captured request (its
 * `anthropic-version` header decides), to check against the 0.x SDK types
 * that match the 2023-06-01 API the frameworks speak.
 * @param {"openai-chat"|"openai-responses"|"anthropic"|"anthropic-2023-06-01"|object} api
 *   the API, or a captured request `{ api, body, headers }`
 * @param {object} [body] the parsed request body
 * @param {{ anthropicVersion?: string }} [options]
 * @returns {{ path: string, key: string, reason: string }[]} `path` locates the object
 *   holding the key (e.g. "input[2]", "messages[1].content[0]"; "" for the top level)
 */
export function extraFields(api, body, { anthropicVersion } = {}) {
  if (api !== null && typeof api === "object") {
    anthropicVersion = api.headers?.["anthropic-version"];
    ({ api, body } = api);
  }
  const spec = REQUEST_KEYS[keySet(api, anthropicVersion)];
  if (!spec) throw new Error(`extraFields: unknown api ${api}`);
  const out = [];
  check(spec.shapes, spec.root, JSON.parse(JSON.stringify(body)), "", out);
  return out;
}
