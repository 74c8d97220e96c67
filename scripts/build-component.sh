#!/usr/bin/env bash
# Builds the WebAssembly component (wit/ world agent:context-compiler@0.1.0)
# for wasmtime hosts, from crates/component:
# target/wasm32-wasip2/release/context_compiler_component.wasm.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --target wasm32-wasip2 -p agent-context-compiler-component
out=target/wasm32-wasip2/release/context_compiler_component.wasm
echo "build-component: $out $(wc -c < "$out") bytes, $(gzip -9c "$out" | wc -c) gzipped"
