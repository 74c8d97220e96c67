// Builds the agent UI (`npm run www`): a static page on the package's web
// entry. The package is taken from this repository's js/ (as it is packed).
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "./",
  resolve: { alias: { "agent-context-compiler": fileURLToPath(new URL("../js/web.js", import.meta.url)) } },
  build: { outDir: fileURLToPath(new URL("../target/www", import.meta.url)), emptyOutDir: true, target: "es2022" },
  logLevel: "warn",
});
