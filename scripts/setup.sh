#!/usr/bin/env bash
# Installs what the build and tests need; idempotent and quick when all is there.
# Usage: scripts/setup.sh [--browser] [--servers] [--targets-only | --packages-only]
#   --browser also installs Debian's chromium; --servers Debian's postgresql
#   and redis-server (scripts/with-servers.sh starts them for the tests).
#   --targets-only adds the rustup targets and stops there (all cargo needs);
#   --packages-only does the rest (npm ci, Debian's packages), which
#   scripts/test.sh runs beside its first cargo stages.
# The downloads (npm ci, Debian's packages) run side by side; their output
# is printed when they end. wasm-bindgen's glue generator is not installed:
# scripts/build.sh builds it with the workspace (tools/bindgen).
set -euo pipefail
cd "$(dirname "$0")/.."

browser=false
servers=false
targets=true
packages=true
for flag in "$@"; do
  case "$flag" in
    --browser) browser=true ;;
    --servers) servers=true ;;
    --targets-only) packages=false ;;
    --packages-only) targets=false ;;
    *) echo "setup: unknown option $flag" >&2; exit 2 ;;
  esac
done
if ! $targets && ! $packages; then
  echo "setup: --targets-only and --packages-only exclude each other" >&2
  exit 2
fi

if $targets; then
  need_targets=()
  installed_targets=$(rustup target list --installed)
  for t in wasm32-unknown-unknown wasm32-wasip2; do
    grep -qx "$t" <<<"$installed_targets" || need_targets+=("$t")
  done
  if ((${#need_targets[@]})); then
    echo "setup: adding rustup targets ${need_targets[*]}"
    rustup target add "${need_targets[@]}"
  fi
fi
$packages || exit 0

logs=$(mktemp -d -t acc-setup-XXXXXX)
pids=()
names=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$logs"' EXIT

# Runs "$@" in the background, its output kept in a log until `finish`.
beside() {
  local name=$1
  shift
  "$@" >"$logs/$name.log" 2>&1 </dev/null &
  pids+=($!)
  names+=("$name")
}

# Waits for everything `beside` started; prints each one's output; fails if one failed.
finish() {
  local i rc failed=0
  for i in "${!pids[@]}"; do
    rc=0
    wait "${pids[$i]}" || rc=$?
    cat "$logs/${names[$i]}.log"
    if ((rc != 0)); then
      echo "setup: ${names[$i]} failed (exit $rc)" >&2
      failed=1
    fi
  done
  pids=()
  names=()
  return "$failed"
}

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm ci"
  beside npm-ci npm ci --no-audit --no-fund
fi

apt_install() {
  local sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "$@" ||
    { "${sudo_cmd[@]}" apt-get update && "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "$@"; }
}

debs=()
if $servers && { ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || ! command -v redis-server >/dev/null; }; then
  echo "setup: installing Debian's postgresql and redis-server for the storage tests"
  debs+=(postgresql redis-server)
fi
if $browser && ! command -v chromium >/dev/null; then
  echo "setup: installing Debian's chromium and chromium-driver for the browser tests"
  debs+=(chromium chromium-driver)
fi
if ((${#debs[@]})); then
  beside apt apt_install "${debs[@]}"
fi

finish
