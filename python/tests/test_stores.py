"""The store conformance behaviours, against every Python backend: saving
incrementally, refusing a stale save, merging writers, artifacts verified
on read, and a failing backend reported, not fatal."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Callable

import pytest

import agent_context_compiler as acc

StoreMaker = Callable[[], acc.ArtifactStore]


def texts(session: acc.Session) -> list[str]:
    return [e["data"]["text"] for e in session.events if e["kind"] == "user_input"]


def test_saves_incrementally_and_loads(make_store: StoreMaker) -> None:
    store = make_store()
    s = acc.Session("inc")
    s.record("user_input", {"text": "one"})
    first = store.save(s)
    assert first.rewritten and first.events_written == 1
    s.record("user_input", {"text": "two"})
    second = store.save(s)
    assert not second.rewritten and second.events_written == 1
    assert store.save(s).events_written == 0
    loaded = store.load("inc")
    assert loaded is not None and loaded.events == s.events
    assert store.load("absent") is None
    assert store.list_sessions() == ["inc"]
    assert store.delete_session("inc") and not store.delete_session("inc")
    assert store.list_sessions() == []


def test_a_stale_save_conflicts_and_sync_merges(make_store: StoreMaker) -> None:
    a_store, b_store = make_store(), make_store()
    a = acc.Session("shared")
    a.record("user_input", {"text": "a0"})
    a_store.save(a)
    b = b_store.load("shared")
    assert b is not None
    a.record("user_input", {"text": "a1"})
    b.record("user_input", {"text": "b1"})
    a_store.save(a)
    with pytest.raises(acc.ContextCompilerError) as e:
        b_store.save(b)
    assert e.value.code == "STORE_CONFLICT"
    report = b_store.sync(b)
    assert report.merged == 1 and report.events_written == 1
    final = make_store().load("shared")
    assert final is not None and texts(final) == ["a0", "a1", "b1"]


def test_artifacts_are_content_addressed_and_verified(make_store: StoreMaker, tmp_path: Path) -> None:
    store = make_store()
    handle = store.store("x" * 5000, "tool:listing", session_id="s")
    again = store.store("x" * 5000, "tool:listing", session_id="s")
    assert handle["artifactId"] == again["artifactId"] and handle["sizeBytes"] == 5000
    assert store.retrieve(handle["artifactId"]) == b"x" * 5000
    assert store.retrieve("0" * 64) is None
    tamper(store, handle["artifactId"], tmp_path)
    with pytest.raises(acc.ContextCompilerError) as e:
        store.retrieve(handle["artifactId"])
    assert e.value.code in ("ARTIFACT_INTEGRITY", "STORE_CORRUPT")


def tamper(store: acc.ArtifactStore, artifact_id: str, tmp_path: Path) -> None:
    """Changes the stored content of ``artifact_id`` behind the store's back."""
    if isinstance(store, acc.KvStore):
        key = next(k for k in store.mapping if artifact_id in k)
        value = bytearray(store.mapping[key])
        value[-1] ^= 1
        store.mapping[key] = bytes(value)
    elif isinstance(store, acc.FileStore):
        path = next(p for p in Path(store.directory).rglob("*") if artifact_id in p.name)
        data = bytearray(path.read_bytes())
        data[-1] ^= 1
        path.write_bytes(bytes(data))
    else:
        assert isinstance(store, acc.SqliteStore)
        (content,) = store.connection.execute(
            "SELECT content FROM acc_artifacts WHERE artifact_id = ?", (artifact_id,)
        ).fetchone()
        changed = bytearray(content)
        changed[-1] ^= 1
        store.connection.execute(
            "UPDATE acc_artifacts SET content = ? WHERE artifact_id = ?", (bytes(changed), artifact_id)
        )


def test_sqlite_uses_the_npm_schema_version_3(tmp_path: Path) -> None:
    store = acc.SqliteStore(tmp_path / "x.db")
    s = acc.Session("v3")
    s.record("user_input", {"text": "hi"})
    store.save(s)
    conn = sqlite3.connect(tmp_path / "x.db")
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"acc_artifacts", "acc_sessions", "acc_events", "acc_meta"} <= tables
    assert ("3",) in [tuple(str(c) for c in r[1:2]) for r in conn.execute("SELECT * FROM acc_meta")]
    rows = conn.execute("SELECT seq FROM acc_events WHERE session_id = 'v3'").fetchall()
    assert rows == [(0,)]


def test_a_database_of_a_newer_version_is_refused(tmp_path: Path) -> None:
    store = acc.SqliteStore(tmp_path / "new.db")
    s = acc.Session("n")
    store.save(s)
    conn = sqlite3.connect(tmp_path / "new.db", isolation_level=None)
    conn.execute("UPDATE acc_meta SET value = '99'")
    conn.close()
    with pytest.raises(acc.ContextCompilerError) as e:
        acc.SqliteStore(tmp_path / "new.db").load("n")
    assert e.value.code == "STORE_VERSION"


class Broken(dict):  # type: ignore[type-arg]
    """A mapping whose reads fail once ``broken`` is set."""

    broken = False

    def __getitem__(self, key: str) -> Any:
        if self.broken:
            raise ConnectionError("the KV is down")
        return super().__getitem__(key)

    def __setitem__(self, key: str, value: Any) -> None:
        if self.broken:
            raise ConnectionError("the KV is down")
        super().__setitem__(key, value)


def test_a_failing_mapping_is_store_failed_and_the_runtime_lives_on() -> None:
    mapping = Broken()
    store = acc.KvStore(mapping)
    s = acc.Session("down")
    s.record("user_input", {"text": "hi"})
    store.save(s)
    mapping.broken = True
    for action in (lambda: store.load("down"), lambda: store.save(s), lambda: store.store("x", "t")):
        with pytest.raises(acc.ContextCompilerError) as e:
            action()
        assert e.value.code == "STORE_FAILED" and "down" in e.value.message
    mapping.broken = False
    s.record("user_input", {"text": "again"})
    assert store.save(s).events_written == 1
    loaded = store.load("down")
    assert loaded is not None and len(loaded) == 2


def test_a_failing_database_is_store_failed(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "c.db", isolation_level=None, check_same_thread=False)
    store = acc.SqliteStore(conn)
    s = acc.Session("closed")
    store.save(s)
    conn.close()
    with pytest.raises(acc.ContextCompilerError) as e:
        store.save(s)
    assert e.value.code == "STORE_FAILED"
    assert len(s) == 0


def test_store_options_are_checked(tmp_path: Path) -> None:
    with pytest.raises(acc.ContextCompilerError) as e:
        acc.KvStore({}, chunk_bytes=10).save(acc.Session())
    assert e.value.code == "INVALID_ARGUMENT"
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    with pytest.raises(acc.ContextCompilerError) as e:
        acc.FileStore(blocked / "sub").save(acc.Session())
    assert e.value.code == "STORE_UNAVAILABLE"



def test_huge_outputs_reach_every_store_and_come_back(make_store: StoreMaker) -> None:
    """An 8 MB output: past what wasmtime-py copies as a byte list (about
    2.7 MB), so it crosses as text; the runtime lives on."""
    store = make_store()
    s = acc.Session("huge")
    output = "".join(f"row {i}: {'x' * 70}\n" for i in range(110_000))
    event = acc.call_tool(s, acc.Tool("dump", lambda a: output), {}, externalize_threshold=4096, store=store)
    assert event["kind"] == "tool_success"
    artifact_id = event["artifact"]["artifactId"]
    assert store.retrieve(artifact_id) == output.encode()
    page = s.look_back("read_artifact", {"handle": artifact_id}, store=store)
    assert "row 0:" in json.dumps(page)
    store.save(s)
    assert make_store().load("huge") is not None


def test_a_kv_chunk_past_what_crosses_is_refused() -> None:
    with pytest.raises(acc.ContextCompilerError) as e:
        acc.KvStore({}, chunk_bytes=4 << 20)
    assert e.value.code == "INVALID_ARGUMENT"
