#!/usr/bin/env bash
# The Python package (python/): a virtual environment (target/python-venv)
# from the package index with the pinned versions (python/requirements-test.txt,
# python/requirements-lock.txt as constraints), made again only when they
# change; the wheel built with the runner component inside (build it first:
# scripts/build-component.sh) and installed; `mypy --strict` on the package
# and on a consumer; the tests (pytest), run against the installed wheel.
# `--build-only` stops once the wheel is installed (for the bench); other
# arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=target/python-venv
want=$(cat python/requirements-test.txt python/requirements-lock.txt | sha256sum | cut -d' ' -f1)
if [[ ! -x $venv/bin/python || "$(cat $venv/.requirements 2>/dev/null)" != "$want" ]]; then
  python3 -m venv --clear "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check \
    -r python/requirements-test.txt -c python/requirements-lock.txt
  echo "$want" >"$venv/.requirements"
fi

component=target/wasm32-wasip2/release/context_compiler_runner.wasm
cp "$component" python/src/agent_context_compiler/
# Its digest beside it: the runtime's cache key, without hashing it at each start.
sha256sum "$component" | cut -d' ' -f1 >python/src/agent_context_compiler/context_compiler_runner.wasm.sha256
rm -rf target/python-dist python/build
"$venv/bin/pip" wheel -q --disable-pip-version-check --no-deps --no-build-isolation \
  -w target/python-dist ./python
"$venv/bin/pip" install -q --disable-pip-version-check --no-deps --force-reinstall target/python-dist/*.whl
rm -rf python/build
if [[ "${1:-}" == "--build-only" ]]; then
  exit 0
fi

# Compiled components are cached here, not in the user's cache.
export AGENT_CONTEXT_COMPILER_CACHE=$PWD/target/python-cache
"$venv/bin/mypy" --strict --no-incremental python/src/agent_context_compiler python/consumer
cd python/tests
"../../$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
