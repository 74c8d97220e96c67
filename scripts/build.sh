#!/usr/bin/env bash
# Builds the npm package's wasm modules and their glue into pkg/: the main
# module (context_compiler, linked by crates/npm-wasm); the event-bus module
# (context_compiler_bus, crates/bus-wasm), which the package loads only when
# the first bus or handler is made; the stores module (context_compiler_stores,
# crates/stores-wasm), loaded only when the first KV, IndexedDB, file or
# SQLite store is made; the JSON Schema module (context_compiler_schema,
# crates/schema-wasm), which the package loads only when a SchemaRegistry is
# first made; and one exact tokenizer module per encoding
# (context_compiler_o200k_base, context_compiler_cl100k_base from
# crates/tokenizer-wasm), loaded only by loadTokenizer.
set -euo pipefail
cd "$(dirname "$0")/.."

release=target/wasm32-unknown-unknown/release
mkdir -p target/modules
# The core with its JS binding, linked by crates/npm-wasm (see its lib.rs).
cargo build --release --target wasm32-unknown-unknown -p agent-context-compiler-npm
cp "$release/context_compiler_npm.wasm" target/modules/context_compiler.wasm
# The event bus and its handlers, linked by crates/bus-wasm.
cargo build --release --target wasm32-unknown-unknown -p agent-context-compiler-bus
cp "$release/context_compiler_bus.wasm" target/modules/context_compiler_bus.wasm
# The persistent stores (KV, IndexedDB, files, SQLite), linked by crates/stores-wasm.
cargo build --release --target wasm32-unknown-unknown -p agent-context-compiler-stores
cp "$release/context_compiler_stores.wasm" target/modules/context_compiler_stores.wasm
cargo build --release --target wasm32-unknown-unknown -p agent-context-compiler-schema
cp "$release/context_compiler_schema.wasm" target/modules/
for encoding in o200k_base cl100k_base; do
  # One package, one encoding a build: copy each out before the next.
  cargo build --release --target wasm32-unknown-unknown -p agent-context-compiler-tokenizer --features "$encoding"
  cp "$release/context_compiler_tokenizer.wasm" "target/modules/context_compiler_$encoding.wasm"
done
for name in context_compiler context_compiler_bus context_compiler_stores context_compiler_schema context_compiler_o200k_base context_compiler_cl100k_base; do
  wasm-bindgen --target web --out-dir pkg --out-name "$name" "target/modules/$name.wasm"
  # wasm-opt from the npm binaryen package (Debian's binaryen 108 emits modules that fail to load).
  node node_modules/binaryen/bin/wasm-opt -Oz --strip-debug --strip-producers --enable-bulk-memory --enable-nontrapping-float-to-int \
    --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue --enable-simd \
    "pkg/${name}_bg.wasm" -o "pkg/${name}_bg.wasm"
  echo "build: pkg/${name}_bg.wasm $(wc -c < "pkg/${name}_bg.wasm") bytes, $(gzip -9c "pkg/${name}_bg.wasm" | wc -c) gzipped"
done
# The package's typings: the bundler target's declarations of the same module
# are the web glue's without its loader types (InitInput and friends name DOM
# types that a Node project without the DOM lib does not have); the entries
# declare their own init functions over js/host-types.d.ts.
mkdir -p pkg/types
for name in context_compiler context_compiler_bus context_compiler_stores; do
  wasm-bindgen --target bundler --out-dir target/types --out-name "$name" "target/modules/$name.wasm"
  cp "target/types/$name.d.ts" "pkg/types/$name.d.ts"
done
node scripts/inline-modules.mjs
