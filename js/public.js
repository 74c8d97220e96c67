// What every entry exports besides `init` and `initSync`: the API (./api.js)
// and the plain JS helpers.
export * from "./api.js";
export * from "./constants.js";
export { isEvent } from "./events.js";
export { pgConnection, sqlConnection } from "./sql.js";
export { redisKv } from "./redis.js";
