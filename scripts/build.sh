#!/usr/bin/env bash
# Builds the npm package's wasm and glue into pkg/.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --target wasm32-unknown-unknown --features js
wasm-bindgen --target web --out-dir pkg --out-name context_compiler \
  target/wasm32-unknown-unknown/release/context_compiler.wasm
# wasm-opt from the npm binaryen package (Debian's binaryen 108 emits modules that fail to load).
node node_modules/binaryen/bin/wasm-opt -Oz --strip-debug --strip-producers --enable-bulk-memory --enable-nontrapping-float-to-int \
  --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue \
  pkg/context_compiler_bg.wasm -o pkg/context_compiler_bg.wasm
echo "build: pkg/context_compiler_bg.wasm $(wc -c < pkg/context_compiler_bg.wasm) bytes, $(gzip -9c pkg/context_compiler_bg.wasm | wc -c) gzipped"
