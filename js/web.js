// Web / edge entry (browsers, web workers, Deno; workerd has ./workerd.js):
// call `await init()` once before using anything; it loads every module (see
// ./init.js). Calls made before that throw a ContextCompilerError with code
// NOT_INITIALIZED (see ./instance.js).
import { useHostCrypto } from "./init.js";

useHostCrypto();

export { init, initSync } from "./init.js";
export * from "./public.js";
