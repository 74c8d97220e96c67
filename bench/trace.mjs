// Deterministic, seeded agent traces: user turns, assistant turns and
// heavy-tailed tool outputs (logs, JSON listings, source files).

/** mulberry32: a small seeded PRNG. */
export function rng(seed) {
  let s = seed | 0;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ("the a to of and in is it for on that with as this was by be are from at or an but not " +
  "deploy service request error timeout retry cache database query index latency user token model " +
  "context budget compile session event tool output handle summary artifact memory worker queue").split(" ");

export function prose(r, chars) {
  let out = "";
  while (out.length < chars) out += WORDS[Math.floor(r() * WORDS.length)] + (r() < 0.08 ? ". " : " ");
  return out.slice(0, chars);
}

/** About `bytes` of timestamped log lines. */
export function logs(r, bytes) {
  let out = "";
  let t = 1_700_000_000 + Math.floor(r() * 1e6);
  while (out.length < bytes) {
    t += Math.floor(r() * 5);
    const level = r() < 0.1 ? "ERROR" : r() < 0.3 ? "WARN" : "INFO";
    out += `${new Date(t * 1000).toISOString()} ${level} [worker-${Math.floor(r() * 16)}] ${prose(r, 30 + Math.floor(r() * 60))} id=${Math.floor(r() * 1e9).toString(16)}\n`;
  }
  return out.slice(0, bytes);
}

/** A minified JSON listing of about `bytes`. */
export function jsonListing(r, bytes) {
  const items = [];
  let size = 2;
  while (size < bytes) {
    const item = { id: Math.floor(r() * 1e6), name: prose(r, 12).trim(), size: Math.floor(r() * 1e5), tags: [WORDS[Math.floor(r() * WORDS.length)]], ok: r() < 0.9 };
    size += JSON.stringify(item).length + 1;
    items.push(item);
  }
  return JSON.stringify(items);
}

/** About `bytes` of Rust-like source. */
export function source(r, bytes) {
  let out = "";
  let depth = 0;
  while (out.length < bytes) {
    const indent = "    ".repeat(depth);
    const name = WORDS[Math.floor(r() * WORDS.length)] + Math.floor(r() * 100);
    if (r() < 0.15 && depth < 4) {
      out += `${indent}fn ${name}(input: &str) -> Result<usize, Error> {\n`;
      depth += 1;
    } else if (r() < 0.15 && depth > 0) {
      depth -= 1;
      out += `${"    ".repeat(depth)}}\n`;
    } else {
      out += `${indent}let ${name} = ${name}.map(|x| x * ${Math.floor(r() * 10)}).unwrap_or_default(); // ${prose(r, 20)}\n`;
    }
  }
  return out.slice(0, bytes);
}

/** A tool output of `bytes`: logs, a JSON listing or source code. */
export function toolOutput(r, bytes) {
  const k = r();
  return k < 0.4 ? logs(r, bytes) : k < 0.7 ? jsonListing(r, bytes) : source(r, bytes);
}

/** Pareto-distributed size (heavy tail), in bytes. */
function toolSize(r) {
  const alpha = 1.16;
  const min = 300;
  return Math.min(Math.floor(min / Math.pow(1 - r(), 1 / alpha)), 256 * 1024);
}

/**
 * `n` events: `{ kind, role, content }` with kind `user_input`,
 * `assistant_output` or `tool_output`.
 */
export function generateTrace(n, seed = 42) {
  const r = rng(seed);
  const events = [];
  while (events.length < n) {
    events.push({ kind: "user_input", role: "user", content: prose(r, 20 + Math.floor(r() * 300)) });
    const tools = r() < 0.6 ? 1 + Math.floor(r() * 3) : 0;
    for (let i = 0; i < tools && events.length < n; i++) {
      const size = toolSize(r);
      const k = r();
      const content = k < 0.4 ? logs(r, size) : k < 0.7 ? jsonListing(r, size) : source(r, size);
      events.push({ kind: "tool_output", role: "tool", content });
    }
    if (events.length < n) events.push({ kind: "assistant_output", role: "assistant", content: prose(r, 80 + Math.floor(r() * 1500)) });
  }
  return events.slice(0, n);
}
