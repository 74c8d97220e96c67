// tests/js/wire: run each framework's REAL provider code over a scripted fetch
// that plays the provider's HTTP API and captures every request body.
//
//   import { scriptedApi, extraFields, counted } from "./wire/index.mjs";
//   const api = scriptedApi({ reply: [
//     { toolCalls: [{ id: "call_1", name: "read_log", arguments: { turn: 1 } }] },
//     { text: "The job ran.", usage: { inputTokens: 120, outputTokens: 5 } },
//   ] });
//   const openai = createOpenAI({ apiKey: "test", fetch: api.fetch });     // AI SDK
//   new ChatOpenAI({ model, apiKey: "test", configuration: { fetch: api.fetch } });
//   new ChatAnthropic({ model, apiKey: "test", clientOptions: { fetch: api.fetch } });
//   new OpenAIResponsesModel(new OpenAI({ apiKey: "test", fetch: api.fetch }), model);
//   ... run the framework ...
//   for (const r of api.requests) assert.deepEqual(extraFields(r.api, r.body), []);
//
// Exports:
//   scriptedApi({ reply })      -> { fetch, requests }: a WHATWG fetch routing
//       POST .../chat/completions (api "openai-chat"), .../responses
//       ("openai-responses") and .../messages ("anthropic"); it records each
//       request as { api, url, method, headers, body, index, reply, status }
//       and answers the scripted, provider-neutral reply ({ text, toolCalls,
//       reasoning, usage, finish } | { status, ... } | { rawBody }) with the
//       JSON, or with `stream: true` the SSE events, the real API sends.
//   toolCallsIn(request)        -> [{ id, name, arguments }] the tool calls in a
//       captured request's history; toolResultsIn(request) -> [{ id, output }]
//       its tool results (provider-neutral).
//   extraFields(api, body, { anthropicVersion }?) or extraFields(request)
//                               -> [{ path, key, reason }] every key of a body
//       its provider's request type does not declare (top level, messages /
//       input items by role and type, content parts, tools, nested objects).
//       Anthropic: by default the top-level @anthropic-ai/sdk 1.x types (API
//       2026-10-21); with anthropicVersion "2023-06-01" (or a captured request
//       whose anthropic-version header says so) the 0.x types of the SDK
//       @langchain/anthropic bundles, which match what the frameworks send.
//   REQUEST_KEYS                -> the declared keys, generated from the SDKs'
//       .d.ts files by gen_request_keys.mjs (openai: chat/completions and
//       responses; @anthropic-ai/sdk 1.12 and 0.122: messages); the
//       request_keys.test.mjs self-test fails when they are stale.
//   counted(body, api)          -> { total, system, messages, tools } o200k
//       token counts of what the request sends (see count.mjs for exactly
//       what counts); tokens(text) -> the o200k count of a string.
//   apiOf(url)                  -> the api a URL is routed to (or null).
//   replyBody(api, reply, { body, seq, stream }) -> the JSON object (or the
//       list of SSE events { event?, data }) the fetch answers a reply with;
//       sseText(events) -> those events as SSE text chunks;
//       errorBody(api, status, message?) -> an API's error body. For tests
//       that assemble responses by hand.
export { scriptedApi, toolCallsIn, toolResultsIn, apiOf, replyBody, sseText, errorBody } from "./scripted_api.mjs";
export { extraFields } from "./extra_fields.mjs";
export { REQUEST_KEYS } from "./request_keys.mjs";
export { counted, tokens } from "./count.mjs";
