#!/usr/bin/env bash
# The layering rule (ARCHITECTURE.md): the core crate depends on no binding.
# Fails when wasm-bindgen, js-sys, web-sys, wasm-bindgen-futures or
# wit-bindgen is anywhere in the core's dependency tree (normal, build or
# dev), or when the core's sources name a binding crate.
set -euo pipefail
cd "$(dirname "$0")/.."
tree=$(cargo tree -p agent-context-compiler -e normal,build,dev --prefix none --format '{p}' | sort -u)
bad=$(grep -E '^(wasm-bindgen|js-sys|web-sys|wasm-bindgen-futures|wit-bindgen|wasmtime)( |$)' <<<"$tree" || true)
if [[ -n "$bad" ]]; then
  echo "check-core: the core depends on binding crates:" >&2
  echo "$bad" >&2
  exit 1
fi
if grep -rnE 'wasm_bindgen|js_sys|web_sys|wit_bindgen|context_compiler_js' src/; then
  echo "check-core: the core's sources name a binding crate (above)" >&2
  exit 1
fi
echo "check-core: the core has no binding dependency ($(wc -l <<<"$tree") crates in its tree)"
