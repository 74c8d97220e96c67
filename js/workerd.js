// The web entry as workerd (Cloudflare Workers) resolves it (the `workerd`
// export condition, which wrangler sets): the same as ./web.js, but the
// optional modules' glue is imported here, statically, so that
// `initSync({ main, stores })` finds it (a worker cannot import a module
// synchronously, and its bundle holds every module it may import anyway).
// Their `.wasm` load only as `initSync` or `init` is given them.
import * as busGlue from "../pkg/context_compiler_bus.js";
import * as schemaGlue from "../pkg/context_compiler_schema.js";
import * as storesGlue from "../pkg/context_compiler_stores.js";
import { setBusGlue } from "./bus.js";
import { useHostCrypto } from "./init.js";
import { setSchemaGlue } from "./schema.js";
import { setStoresGlue } from "./stores.js";

setBusGlue(busGlue);
setStoresGlue(storesGlue);
setSchemaGlue(schemaGlue);
useHostCrypto();

export { init, initSync } from "./init.js";
export * from "./public.js";
