// Writes js/option-keys.js, the options keys each callable declares in
// js/node.d.ts, which the guards check calls against (js/module-guard.js).
// Run after changing an options type: `node scripts/option-keys.mjs`.
import { writeFileSync } from "node:fs";
import { optionKeysModule, program } from "../tests/js/declared_api.mjs";

writeFileSync(new URL("../js/option-keys.js", import.meta.url), optionKeysModule(program()));
