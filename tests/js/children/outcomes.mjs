// For the children that report what each use did: a call's outcome, or a
// promise's, as plain data ({ ok, value } or { ok, name, code, message }).

/** What calling `f` did. */
export const outcome = (f) => {
  try {
    const value = f();
    return { ok: true, value: value === undefined ? null : String(value) };
  } catch (e) {
    return { ok: false, name: e.name, code: e.code, message: e.message };
  }
};

/** What `p` settled to. */
export const settled = (p) =>
  p.then(
    (value) => ({ ok: true, value: String(value) }),
    (e) => ({ ok: false, name: e.name, code: e.code, message: e.message }),
  );
