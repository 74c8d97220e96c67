"""The bulk conversion of byte lists gives what wasmtime-py's own does."""

from __future__ import annotations

import os
import re

import agent_context_compiler as acc
from agent_context_compiler import _speedups
from wasmtime.component._types import ListType


def round_trip(content: bytes) -> bytes | None:
    store = acc.MemoryStore()
    handle = store.store(content, "tool:bytes", mime_type="application/octet-stream")
    return store.retrieve(handle["artifactId"])


def test_the_bulk_path_is_installed_and_agrees_with_the_stock_one() -> None:
    acc.Session()  # the runtime exists
    assert _speedups.installed()
    samples = [b"", b"\x00", bytes(range(256)), os.urandom(70_000)]
    bulk = [(round_trip(s), dict(sorted(_stored(s).items()))) for s in samples]
    ListType.convert_to_c = _speedups.stock_to_c  # type: ignore[method-assign]
    ListType.convert_from_c = _speedups.stock_from_c  # type: ignore[method-assign]
    try:
        stock = [(round_trip(s), dict(sorted(_stored(s).items()))) for s in samples]
    finally:
        _speedups.install()
    assert bulk == stock
    assert [b for b, _ in bulk] == samples


def _stored(content: bytes) -> dict[str, bytes]:
    """What a store of ``content`` writes, its time left out."""
    store = acc.KvStore({}, chunk_bytes=4096)
    store.store(content, "tool:bytes")
    return {k: re.sub(rb'"createdAt":[0-9.e+]+', b"", v) for k, v in store.mapping.items()}
