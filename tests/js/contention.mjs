// Writer processes racing to sync the same sessions through one backend:
// each is a `children/sync_writer.mjs` (see there for what it prints). Used
// by multi_writer.test.mjs and by bench/sync_contention.mjs.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const child = fileURLToPath(new URL("./children/sync_writer.mjs", import.meta.url));

/**
 * Starts a writer: `lines` fills as it prints, `onLine` is told of each,
 * `done` resolves with its exit. `options`: `events`, `sessions`, `seed`,
 * `role` ("worker" or "victim"), `maxTries`, `every`.
 */
export function spawnWriter(backend, where, name, options) {
  const { events, sessions, seed, role = "worker", maxTries = 1000, every = 1 } = options;
  const args = [child, backend, where, name, String(events), String(sessions), String(seed), role, String(maxTries), String(every)];
  const proc = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  const state = { proc, lines: [], err: "", onLine: () => {} };
  let partial = "";
  proc.stdout.on("data", (d) => {
    const parts = (partial + d).split("\n");
    partial = parts.pop();
    for (const line of parts) {
      state.lines.push(line);
      state.onLine(line);
    }
  });
  proc.stderr.on("data", (d) => (state.err += d));
  state.done = new Promise((resolve) => proc.on("exit", (code, signal) => resolve({ code, signal })));
  return state;
}

/**
 * `writers` writers at once, each recording `events` events into `sessions`
 * sessions and syncing every `every` with `session.sync`'s default tries:
 * the tries of every sync that succeeded, how many gave up, and what each
 * writer acknowledged. Fails when a writer fails.
 */
export async function contend(backend, where, { writers, events, sessions = 2, every = 1, seed = 1 }) {
  const procs = Array.from({ length: writers }, (_, w) => spawnWriter(backend, where, `w${w}`, { events, sessions, seed: seed * 1000 + w, maxTries: 8, every }));
  const exits = await Promise.all(procs.map((p) => p.done));
  exits.forEach((e, w) => {
    if (e.code !== 0) throw new Error(`writer ${w} exited with ${e.code ?? e.signal}: ${procs[w].err}`);
  });
  const lines = procs.flatMap((p) => p.lines);
  return {
    perWriter: procs.map((p) => p.lines.filter((l) => l === "gave up").length),
    tries: lines.filter((l) => l.startsWith("tries ")).map((l) => Number(l.slice(6))),
    gaveUp: lines.filter((l) => l === "gave up").length,
    acked: lines.filter((l) => l.startsWith("acked ")).map((l) => l.slice(6)),
  };
}
