#!/usr/bin/env bash
# The long fuzz run (`npm run fuzz`): the Rust property harness
# (tests/fuzz_properties.rs: PDFs, image headers, the record wire format,
# session and event import, KV records, SQL rows, redaction) natively with
# FUZZ_CASES inputs a target (default 20,000), then the JS converters and
# the parsers through the built wasm module (tests/js/fuzz_converters.test.mjs,
# wasm32) with FUZZ_JS_CASES (default 5,000). `npm test` runs both short
# (512 and 150). Set FUZZ_SEED for another JS seed; FUZZ_NO_BUILD=1 uses
# the package already in pkg/.
set -euo pipefail
cd "$(dirname "$0")/.."
cases="${FUZZ_CASES:-20000}"
js_cases="${FUZZ_JS_CASES:-5000}"
if [ "${FUZZ_NO_BUILD:-}" != 1 ]; then
  bash scripts/build.sh
fi
start=$(date +%s)
FUZZ_CASES="$cases" cargo test -p agent-context-compiler --test fuzz_properties -- --nocapture
echo "fuzz: native, $cases inputs a target, $(($(date +%s) - start)) s"
start=$(date +%s)
FUZZ_CASES="$js_cases" node --test tests/js/fuzz_converters.test.mjs
echo "fuzz: wasm module, $js_cases inputs a target, $(($(date +%s) - start)) s"
