// Serves the built agent UI (target/www) on 127.0.0.1: `npm run www`.
// Static files only; the agent runs in the tab.
import { fileURLToPath } from "node:url";
import { startServer } from "../tests/browser/server.mjs";

const port = Number(process.env.PORT ?? 5173);
const server = await startServer(fileURLToPath(new URL("../target/www", import.meta.url)), port);
console.log(`agent UI: ${server.origin}/ (Ctrl-C stops it)`);
