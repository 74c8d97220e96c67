#!/usr/bin/env bash
# Builds the npm package's two wasm modules and their glue into pkg/: the main
# module (context_compiler) and the JSON Schema module (context_compiler_schema,
# crates/schema-wasm), which the package loads only when a SchemaRegistry is
# first made.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --target wasm32-unknown-unknown --no-default-features --features js
cargo build --release --target wasm32-unknown-unknown -p agent-context-compiler-schema
for name in context_compiler context_compiler_schema; do
  wasm-bindgen --target web --out-dir pkg --out-name "$name" "target/wasm32-unknown-unknown/release/$name.wasm"
  # wasm-opt from the npm binaryen package (Debian's binaryen 108 emits modules that fail to load).
  node node_modules/binaryen/bin/wasm-opt -Oz --strip-debug --strip-producers --enable-bulk-memory --enable-nontrapping-float-to-int \
    --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue --enable-simd \
    "pkg/${name}_bg.wasm" -o "pkg/${name}_bg.wasm"
  echo "build: pkg/${name}_bg.wasm $(wc -c < "pkg/${name}_bg.wasm") bytes, $(gzip -9c "pkg/${name}_bg.wasm" | wc -c) gzipped"
done
