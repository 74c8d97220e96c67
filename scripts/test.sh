#!/usr/bin/env bash
# Runs every test: formatting, lints, the component build and its wasmtime
# host tests, the native core's tests, the wasm build,
# the TypeScript check of the generated types, and the JS tests against the
# built package.
set -euo pipefail
cd "$(dirname "$0")/.."
# A one-off run gains nothing from incremental compilation and its cache
# takes close to a gigabyte; a developer iterating can set CARGO_INCREMENTAL=1.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

bash scripts/setup.sh --browser --servers
cargo fmt --check
# Every crate natively (the core with its tests, the bindings, the
# component's wasmtime host test), then each wasm crate for its target.
cargo clippy --workspace --all-targets --exclude agent-context-compiler-tokenizer -- -D warnings
cargo clippy --target wasm32-unknown-unknown -p agent-context-compiler-text -- -D warnings
cargo clippy --target wasm32-unknown-unknown -p agent-context-compiler-recall -- -D warnings
cargo clippy --target wasm32-unknown-unknown -p agent-context-compiler-js -- -D warnings
cargo clippy --target wasm32-unknown-unknown -p agent-context-compiler-npm -- -D warnings
cargo clippy --target wasm32-unknown-unknown -p agent-context-compiler-bus -- -D warnings
cargo clippy --target wasm32-unknown-unknown -p agent-context-compiler-stores -- -D warnings
cargo clippy --target wasm32-unknown-unknown -p agent-context-compiler-schema -- -D warnings
cargo clippy --target wasm32-unknown-unknown -p agent-context-compiler-tokenizer --features o200k_base -- -D warnings
cargo clippy --target wasm32-wasip2 -p agent-context-compiler-component -- -D warnings
# The core alone, with no wasm crate in its dependency tree.
bash scripts/check-core.sh
bash scripts/build-component.sh
cargo test
cargo test -p agent-context-compiler-text -p agent-context-compiler-recall -p agent-context-compiler-npm -p agent-context-compiler-component
cargo run --quiet -p agent-context-compiler-component --example wasmtime_host
bash scripts/build.sh
npx tsc -p tests/ts/tsconfig.json
# The JS tests with a throwaway PostgreSQL and Redis up (the storage tests).
bash scripts/with-servers.sh node --test tests/js/
