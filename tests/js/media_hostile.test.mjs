// A hostile PDF through the wasm module (issue 62, items 1 and 2): a stream
// `/Length` near 2^32 overflowed the page counter's `usize` arithmetic on
// wasm32 (32-bit) and trapped, poisoning the module; N zip bombs in one file
// are charged to one 64 MiB budget. Each reaches the counter both ways: a
// tool returning the PDF in runCompiled and attachMedia; a later, unrelated
// call in the same process still works (no MODULE_POISONED).
import { test } from "node:test";
import assert from "node:assert/strict";
import { deflateSync } from "node:zlib";
import {
  MemoryArtifactStore, Session, attachMedia, countTokens, runCompiled,
} from "agent-context-compiler";

const enc = (s) => new TextEncoder().encode(s);
const concat = (...parts) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
};

/** A 0.2 KB PDF whose object stream claims a `/Length` near 2^32. */
export function overflowingPdf() {
  const data = deflateSync(Buffer.from("1 0 << /Type /Page >>"));
  return concat(
    enc("%PDF-1.5\n5 0 obj << /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode /Length 4294967290 >>\nstream\n"),
    data,
    enc("\nendstream\nendobj\n%%EOF\n"),
  );
}

test("a PDF with a /Length near 2^32 is counted, through attachMedia, and the module stays usable", async () => {
  const pdf = overflowingPdf();
  assert.ok(pdf.length < 256, "a 0.2 KB file");
  const store = new MemoryArtifactStore();
  const part = await attachMedia(store, pdf, { filename: "hostile.pdf" });
  assert.equal(part.type, "file");
  assert.equal(part.pages, 1, "the page object in the stream (read up to endstream)");
  const session = new Session();
  session.record("user_input", { text: "unrelated", media: [part] });
  assert.ok(countTokens("a later, unrelated call") > 0);
});

test("a tool returning the PDF in runCompiled: counted, and a later call works", async () => {
  const store = new MemoryArtifactStore();
  const requests = [];
  await runCompiled("Read the report.", {
    budget: 20_000, systemPrompt: "You read reports.", format: "anthropic", modelName: "claude-sonnet-4",
    tools: [{ name: "fetch_report", parameters: { type: "object" } }],
    bridge: () => overflowingPdf(), artifactStore: store,
    model: (request, { step }) => {
      requests.push(request);
      return step === 0 ? { toolCalls: [{ id: "c1", name: "fetch_report", arguments: {} }] } : "Done.";
    },
  });
  assert.equal(requests.length, 2);
  assert.ok(JSON.stringify(requests[1]).includes('"document"'), "the PDF is sent as a document");
  assert.ok(countTokens("a later, unrelated call") > 0);
  const session = new Session();
  session.record("user_input", "still works");
  assert.equal(session.eventLog.events.length, 1);
});
