#!/usr/bin/env bash
# Installs what the build and tests need; idempotent and quick when all is there.
# Usage: scripts/setup.sh [--browser]   (--browser also installs Debian's chromium)
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_BINDGEN_VERSION=0.2.130

need_targets=()
installed_targets=$(rustup target list --installed)
for t in wasm32-unknown-unknown wasm32-wasip2; do
  grep -qx "$t" <<<"$installed_targets" || need_targets+=("$t")
done
if ((${#need_targets[@]})); then
  echo "setup: adding rustup targets ${need_targets[*]}"
  rustup target add "${need_targets[@]}"
fi

if ! wasm-bindgen --version 2>/dev/null | grep -q " $WASM_BINDGEN_VERSION\$"; then
  echo "setup: installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (takes a few minutes)"
  # Not --locked: the CLI's locked dependency set does not resolve here.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund
fi

if [ "${1:-}" = "--browser" ] && ! command -v chromium >/dev/null; then
  echo "setup: installing Debian's chromium and chromium-driver for the browser tests"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get install -y --no-install-recommends chromium chromium-driver ||
    { "${sudo_cmd[@]}" apt-get update && "${sudo_cmd[@]}" apt-get install -y --no-install-recommends chromium chromium-driver; }
fi
