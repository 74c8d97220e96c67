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
#
# The JS glue comes from tools/bindgen (acc-bindgen: wasm-bindgen's own
# library at the version the modules link, built here in the `tool`
# profile). Each module's glue and wasm-opt (single-threaded) run in the
# background as soon as its cargo build is done, beside the next build.
set -euo pipefail
cd "$(dirname "$0")/.."

release=target/wasm32-unknown-unknown/release
modules=(context_compiler context_compiler_bus context_compiler_stores context_compiler_schema context_compiler_o200k_base context_compiler_cl100k_base)
mkdir -p target/modules pkg
logs=$(mktemp -d -t acc-build-XXXXXX)
pids=()
names=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$logs"' EXIT

build() {
  cargo build --release --target wasm32-unknown-unknown "$@"
}

cargo build --profile tool -p agent-context-compiler-bindgen
bindgen=target/tool/acc-bindgen

# wasm-opt from the npm binaryen package (Debian's binaryen 108 emits modules
# that fail to load).
wasm_opt_flags=(-Oz --strip-debug --strip-producers --enable-bulk-memory --enable-nontrapping-float-to-int
  --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue --enable-simd)
binaryen_version=$(node -p 'require("./node_modules/binaryen/package.json").version')

# The glue and the optimised module for target/modules/$1.wasm, in the
# background; skipped when pkg/ holds them already for the same module bytes,
# wasm-opt version and flags (target/modules/$1.stamp).
finish() {
  local name=$1 stamp
  stamp="$(sha256sum <"target/modules/$name.wasm" | cut -c1-64) binaryen $binaryen_version ${wasm_opt_flags[*]}"
  if [ -f "pkg/$name.js" ] && [ -f "pkg/${name}_bg.wasm" ] && [ "$(cat "target/modules/$name.stamp" 2>/dev/null)" = "$stamp" ]; then
    return
  fi
  rm -f "target/modules/$name.stamp"
  (
    set -euo pipefail
    "$bindgen" --target web --out-dir pkg --out-name "$name" "target/modules/$name.wasm"
    node node_modules/binaryen/bin/wasm-opt "${wasm_opt_flags[@]}" "pkg/${name}_bg.wasm" -o "pkg/${name}_bg.wasm"
    echo "$stamp" >"target/modules/$name.stamp"
  ) >"$logs/$name.log" 2>&1 &
  pids+=($!)
  names+=("$name")
}

# The core with its JS binding (linked by crates/npm-wasm, see its lib.rs),
# the event bus and its handlers (crates/bus-wasm) and the persistent stores
# (crates/stores-wasm) in one build: they select the same features of every
# crate they share, so each module is byte for byte what a build of its own
# makes, and their link-time optimisations run side by side.
build -p agent-context-compiler-npm -p agent-context-compiler-bus -p agent-context-compiler-stores
cp "$release/context_compiler_npm.wasm" target/modules/context_compiler.wasm
cp "$release/context_compiler_bus.wasm" target/modules/context_compiler_bus.wasm
cp "$release/context_compiler_stores.wasm" target/modules/context_compiler_stores.wasm
finish context_compiler
finish context_compiler_bus
finish context_compiler_stores
# Built alone: the schema module turns on the core's `jsonschema` feature, and
# the tokenizer's dependencies turn on features of crates the core uses too,
# which would grow the main module.
build -p agent-context-compiler-schema
cp "$release/context_compiler_schema.wasm" target/modules/
finish context_compiler_schema
for encoding in o200k_base cl100k_base; do
  # One package, one encoding a build: copy each out before the next.
  build -p agent-context-compiler-tokenizer --features "$encoding"
  cp "$release/context_compiler_tokenizer.wasm" "target/modules/context_compiler_$encoding.wasm"
  finish "context_compiler_$encoding"
done

# The package's typings: the bundler target's declarations of the same module
# are the web glue's without its loader types (InitInput and friends name DOM
# types that a Node project without the DOM lib does not have); the entries
# declare their own init functions over js/host-types.d.ts.
mkdir -p pkg/types
for name in context_compiler context_compiler_bus context_compiler_stores; do
  "$bindgen" --target bundler --out-dir target/types --out-name "$name" "target/modules/$name.wasm"
  cp "target/types/$name.d.ts" "pkg/types/$name.d.ts"
done

failed=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { cat "$logs/${names[$i]}.log" >&2; echo "build: ${names[$i]} failed" >&2; failed=1; }
done
pids=()
((failed == 0))
for name in "${modules[@]}"; do
  echo "build: pkg/${name}_bg.wasm $(wc -c <"pkg/${name}_bg.wasm") bytes, $(gzip -9c "pkg/${name}_bg.wasm" | wc -c) gzipped"
done
node scripts/inline-modules.mjs
# The entries as bundles: one file each over one shared chunk (scripts/bundle.mjs).
node scripts/bundle.mjs
