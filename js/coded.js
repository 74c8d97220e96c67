// Errors the JS side raises itself, shaped like the ones from Rust: an
// `Error` named ContextCompilerError with a stable `code`.

/** A ContextCompilerError with `code` and `message` (and `cause`, if given). */
export function codedError(code, message, cause) {
  const e = new Error(`agent-context-compiler: ${message}`, cause === undefined ? undefined : { cause });
  e.name = "ContextCompilerError";
  e.code = code;
  return e;
}
