// Run in a child process by hostile_host.test.mjs: a bridge hands back values
// whose traps and getters throw. Prints one JSON line of what each call
// resolved to; the process must exit 0 (an uncaught exception kills it).
import {
  PerceptionAligner, SchemaRegistry, Session, ToolInterruptHandler,
} from "agent-context-compiler";

const throwingKeys = new Proxy({}, { ownKeys() { throw new Error("ownKeys trap"); } });
const throwingGet = new Proxy([1, 2], { get() { throw new Error("get trap"); } });
const throwingArrayCheck = (() => {
  const { proxy, revoke } = Proxy.revocable([], {});
  revoke();
  return proxy;
})();
class Hostile extends Error {
  get message() { throw new Error("message getter"); }
}
const cases = {
  ownKeys: async () => throwingKeys,
  getTrap: async () => throwingGet,
  revoked: async () => throwingArrayCheck,
  messageGetter: async () => { throw new Hostile(); },
  messageGetterSync: () => { throw new Hostile(); },
  thenGetter: () => ({ get then() { throw new Error("then getter"); } }),
};
const session = new Session();
const handler = new ToolInterruptHandler({
  bridge: (name) => cases[name](),
  normalizer: new PerceptionAligner(new SchemaRegistry()),
  session,
});
const out = {};
for (const name of Object.keys(cases)) {
  const evt = await handler.call(name, {});
  out[name] = { kind: evt.kind, error: evt.error };
}
out.events = session.eventLog.length;
console.log(JSON.stringify(out));
