// Web / edge entry (browsers, web workers, Deno, Cloudflare workerd): call
// `await init()` once before using anything; it loads every module (see
// ./init.js). Calls made before that throw a ContextCompilerError with code
// NOT_INITIALIZED (see ./instance.js).
export { init, initSync } from "./init.js";
export * from "./api.js";
export * from "./constants.js";
export { isEvent } from "./events.js";
export { pgConnection, sqlConnection } from "./sql.js";
export { redisKv } from "./redis.js";
