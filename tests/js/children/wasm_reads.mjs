// For the children that check which WebAssembly modules the package reads:
// from now on, every `.wasm` read through fs.readFileSync is noted, by name.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { basename } from "node:path";

/** Starts noting `.wasm` reads; returns the live list of their file names. */
export function noteWasmReads() {
  const read = [];
  const original = fs.readFileSync;
  fs.readFileSync = function (path, ...rest) {
    const name = basename(path instanceof URL ? path.pathname : String(path));
    if (name.endsWith(".wasm")) read.push(name);
    return original.call(this, path, ...rest);
  };
  syncBuiltinESMExports();
  return read;
}
