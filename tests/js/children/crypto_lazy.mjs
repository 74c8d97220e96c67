// Run by entries.test.mjs in a fresh process: whether node:crypto is loaded
// after importing the node entry, after a compile, and after the first
// hash (contentId). Prints what it saw.
const cryptoLoaded = () => process.moduleLoadList.includes("NativeModule crypto");

const before = cryptoLoaded();
const lib = await import("agent-context-compiler");
const afterImport = cryptoLoaded();
const session = new lib.Session({ sessionId: "lazy-crypto" });
session.record("user_input", "Why did the nightly job fail?");
const compiler = new lib.ContextCompiler({ layout: "zoned", processors: [new lib.HistorySelector()] });
const ctx = await compiler.compile(session, 4000, { systemPrompt: "You are an SRE." });
ctx.toMessages({ format: "openai" });
const afterCompile = cryptoLoaded();
const id = lib.contentId("abc");
const afterHash = cryptoLoaded();
console.log(JSON.stringify({ before, afterImport, afterCompile, afterHash, id }));
