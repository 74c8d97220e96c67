#!/usr/bin/env bash
# Installs what the build and tests need; idempotent and quick when all is there.
# Usage: scripts/setup.sh [--browser] [--servers]
#   --browser also installs Debian's chromium; --servers Debian's postgresql
#   and redis-server (scripts/with-servers.sh starts them for the tests).
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

browser=false
servers=false
for flag in "$@"; do
  case "$flag" in
    --browser) browser=true ;;
    --servers) servers=true ;;
    *) echo "setup: unknown option $flag" >&2; exit 2 ;;
  esac
done

apt_install() {
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "$@" ||
    { "${sudo_cmd[@]}" apt-get update && "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "$@"; }
}

if $servers && { ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || ! command -v redis-server >/dev/null; }; then
  echo "setup: installing Debian's postgresql and redis-server for the storage tests"
  apt_install postgresql redis-server
fi

if $browser && ! command -v chromium >/dev/null; then
  echo "setup: installing Debian's chromium and chromium-driver for the browser tests"
  apt_install chromium chromium-driver
fi
