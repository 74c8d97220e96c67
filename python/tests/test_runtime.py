"""The runtime: the compiled component cached and reused, a cache file
that does not load compiled again."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_context_compiler import _runtime


def test_the_compiled_component_is_cached_and_a_bad_cache_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_CONTEXT_COMPILER_CACHE", str(tmp_path))
    first = _runtime.Runtime()
    assert first.loaded_from == "compiled"
    cached = list(tmp_path.glob("*.cwasm"))
    assert len(cached) == 1
    assert _runtime.Runtime().loaded_from == "cache"
    cached[0].write_bytes(b"not a compiled component")
    assert _runtime.Runtime().loaded_from == "compiled"
    assert _runtime.Runtime().loaded_from == "cache"
    monkeypatch.setenv("AGENT_CONTEXT_COMPILER_CACHE", "off")
    assert _runtime.Runtime().loaded_from == "compiled-uncached"


def test_the_digest_written_beside_the_component_is_its_sha256() -> None:
    import hashlib

    assert _runtime._wasm_digest() == hashlib.sha256(_runtime._wasm_bytes()).hexdigest()
