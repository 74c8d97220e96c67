#!/usr/bin/env bash
# Runs every test: formatting, lints (clippy -D warnings on every crate, for
# each target it is built for), the layering rule, the wasm build, the
# component build and its wasmtime host tests (Rust, jco, and the Python
# package in wasmtime-py), the native tests, the
# TypeScript check of the generated types, and the JS tests against the built
# package (servers, headless Chromium, the other runtimes). Prints each
# stage's wall time and the total at the end (scripts/stages.sh).
#
# Each crate is built once per profile and target, and stages that share no
# build directory run side by side (2 cores): the dev profile's (the wasm
# lints, then the native test build) beside the release profile's (the wasm
# modules, whose link-time optimisations and wasm-opt runs are
# single-threaded, then the component), and the JS tests (about one core)
# beside both once the package is built.
set -euo pipefail
cd "$(dirname "$0")/.."
# A one-off run gains nothing from incremental compilation and its cache
# takes close to a gigabyte; a developer iterating can set CARGO_INCREMENTAL=1.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
. scripts/stages.sh

# The crates built for wasm32-unknown-unknown, linted for it: one check for
# the crates that share the core's features (the core without `jsonschema`),
# one for the schema module (the core with it), one for the tokenizer (its
# encoding), and the component for wasm32-wasip2.
wasm_lint() {
  cargo clippy --target wasm32-unknown-unknown -p agent-context-compiler-text -p agent-context-compiler-recall \
    -p agent-context-compiler-js -p agent-context-compiler-npm -p agent-context-compiler-bus \
    -p agent-context-compiler-stores -- -D warnings
  cargo clippy --target wasm32-unknown-unknown -p agent-context-compiler-schema -- -D warnings
  cargo clippy --target wasm32-unknown-unknown -p agent-context-compiler-tokenizer --features o200k_base -- -D warnings
  cargo clippy --target wasm32-wasip2 -p agent-context-compiler-component -- -D warnings
  cargo clippy --target wasm32-wasip2 -p agent-context-compiler-component --features runner -- -D warnings
}

# The TypeScript consumers' check, then the JS tests with a throwaway
# PostgreSQL and Redis up (the storage tests).
js_tests() {
  stage typescript npx tsc -p tests/ts/tsconfig.json
  stage js-tests bash scripts/with-servers.sh node --test tests/js/
}

# Cargo with the clippy driver as the workspace's compiler (what `cargo
# clippy` sets up for a check, here for a build): the workspace's crates are
# linted (-D warnings) as they compile, so lints and tests share one build,
# and the dependencies, wasmtime's among them, are compiled once, for the
# tests, not a second time for a check.
clippy_cargo() {
  local driver
  driver=$(rustup which clippy-driver)
  clippy_lints_builds "$driver"
  RUSTC_WORKSPACE_WRAPPER=$driver CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__" cargo "$@"
}

# Fails unless the clippy driver $1 refuses a lint in a build (not only in a
# check), which is what clippy_cargo counts on.
clippy_lints_builds() {
  local dir rc=0
  dir=$(mktemp -d)
  echo 'pub fn copied(x: &u32) -> u32 { x.clone() }' >"$dir/canary.rs"
  CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__" "$1" --edition 2021 --crate-type lib \
    --emit link -o "$dir/canary.rlib" "$dir/canary.rs" >"$dir/out" 2>&1 || rc=$?
  if ((rc == 0)) || ! grep -q clone_on_copy "$dir/out"; then
    cat "$dir/out" >&2
    echo "test: the clippy driver built code that breaks a lint (clippy::clone_on_copy): builds would go unlinted" >&2
    rm -rf "$dir"
    return 1
  fi
  rm -rf "$dir"
}

# Every crate natively, with its tests: the same lints as `cargo clippy
# --workspace --all-targets -- -D warnings` (there are no bench targets).
# The build tool is tested in the profile scripts/build.sh builds it in.
native_cargo_test() {
  clippy_cargo test --workspace --exclude agent-context-compiler-tokenizer \
    --exclude agent-context-compiler-bindgen "$@"
}

# The native build, its messages kept to find the example's binary.
native_build() {
  native_cargo_test --no-run --message-format=json-render-diagnostics >target/native-tests.jsonl
}

# The dev-profile lane: the wasm lints, then the native build (both hold
# target/debug), beside the release builds.
dev_lane() {
  stage wasm-lint wasm_lint
  stage native-build native_build
}

# The native tests and doctests, and the component's host example, whose
# binary the native build made (the component must be built first).
native_tests() {
  native_cargo_test
  "$(node scripts/artifact.mjs target/native-tests.jsonl example wasmtime_host)"
}

stage targets bash scripts/setup.sh --targets-only
# The downloads (npm ci, Debian's packages) beside the first cargo stages.
stage_bg packages bash scripts/setup.sh --packages-only --browser --servers
stage fmt cargo fmt --check
# The core alone, with no wasm crate in its dependency tree.
stage check-core bash scripts/check-core.sh
stage_bg dev dev_lane
# wasm-opt comes from node_modules.
stage_wait packages
stage wasm-build bash scripts/build.sh
stage_bg js js_tests
stage bindgen-tool clippy_cargo test --profile tool -p agent-context-compiler-bindgen
stage component-build bash scripts/build-component.sh
# The runner component in a second host: transpiled by jco, run in Node.
stage_bg component-jco node --test tests/component/
# The Python package over the runner component, in wasmtime-py.
stage_bg python bash scripts/python.sh
stage_wait dev
stage native-tests native_tests
stage_wait js
stage_wait component-jco
stage_wait python
# Writer processes racing to sync one session: how many syncs give up
# depends on how busy the machine is, so it runs alone, last.
stage contention bash scripts/with-servers.sh node --test tests/contention/
