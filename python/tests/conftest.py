"""Shared fixtures: every store backend, made fresh for each test."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Callable, Iterator

import pytest

import agent_context_compiler as acc

StoreMaker = Callable[[], acc.ArtifactStore]


@pytest.fixture(params=["memory", "mapping", "files", "sqlite"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreMaker]:
    """A maker of stores of one backend that share one place: two stores
    it makes are two writers of the same data."""
    kind = request.param
    shared: dict[str, bytes] = {}
    connections: list[sqlite3.Connection] = []

    memory = acc.MemoryStore()

    def make() -> acc.ArtifactStore:
        if kind == "memory":
            return memory
        if kind == "mapping":
            return acc.KvStore(shared)
        if kind == "files":
            return acc.FileStore(tmp_path / "files")
        conn = sqlite3.connect(tmp_path / "store.db", isolation_level=None, check_same_thread=False, timeout=30)
        connections.append(conn)
        return acc.SqliteStore(conn)

    yield make
    for conn in connections:
        conn.close()


def scripted(*replies: object) -> Callable[[dict[str, object], int], object]:
    """A model answering ``replies`` in order, one per step."""
    queue = list(replies)

    def model(request: dict[str, object], step: int) -> object:
        assert "messages" in request
        return queue.pop(0)

    return model
