// Run by store_writers.test.mjs, several at once over one directory:
// `node fs_writer.mjs <baseDir> <sessionId> <name> <count>` loads, appends
// and saves `count` times (again on STORE_CONFLICT) through FsArtifactStore,
// printing each text once its save resolved. Killed at any moment, it must
// leave every printed text saved and the session loadable.
import * as lib from "agent-context-compiler";
import { writeSync } from "node:fs";
import { writer } from "../../conformance/writers.mjs";

const [baseDir, id, name, count] = process.argv.slice(2);
const store = new lib.FsArtifactStore({ baseDir });
// writeSync: an acknowledgement printed is on its way to the parent even if
// the process is killed right after.
await writer(lib, store, id, name, Number(count), (text) => writeSync(1, `${text}\n`));
