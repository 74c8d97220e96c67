#!/usr/bin/env bash
# Builds the WebAssembly components (wit/, package agent:context-compiler@0.6.0)
# from crates/component, one per world:
#   target/wasm32-wasip2/release/context_compiler_component.wasm  (context-compiler)
#   target/wasm32-wasip2/release/context_compiler_runner.wasm     (context-compiler-runner)
# The runner world is the same crate with its `runner` feature; the second
# build recompiles only that crate.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=target/wasm32-wasip2/release
cargo build --release --target wasm32-wasip2 -p agent-context-compiler-component --features runner
cp "$dir/context_compiler_component.wasm" "$dir/context_compiler_runner.wasm"
cargo build --release --target wasm32-wasip2 -p agent-context-compiler-component
for out in "$dir/context_compiler_component.wasm" "$dir/context_compiler_runner.wasm"; do
  echo "build-component: $out $(wc -c < "$out") bytes, $(gzip -9c "$out" | wc -c) gzipped"
done
