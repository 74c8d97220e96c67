// Module hooks for cold_start.mjs: posts the URL of every module resolved.
let port;

export async function initialize(data) {
  port = data.port;
}

export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  port.postMessage(resolved.url);
  return resolved;
}
