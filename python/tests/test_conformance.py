"""The store conformance behaviours (tests/fixtures/store_conformance.json,
which the Rust and JS suites implement) against every Python store. Each
behaviour is a test here, or is named in NOT_EXPOSED with the reason the
component's ``artifact-store`` interface gives none; a behaviour added to
the list fails this suite until it is one or the other."""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Callable

import pytest

import agent_context_compiler as acc

StoreMaker = Callable[[], acc.ArtifactStore]
SUITE = json.loads(
    (Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "store_conformance.json").read_text()
)["behaviours"]

NOT_EXPOSED = {
    "exists": "the component's artifact-store has no exists()",
    "list_by_session": "the component's artifact-store has no listHandles()",
    "delete": "the component's artifact-store has no delete() of an artifact",
    "session_tail": "a store-internal read that sync makes: tested through sync (test_stores.py)",
}


def test_every_behaviour_is_tested_or_named() -> None:
    tested = {name[len("test_") :] for name in globals() if name.startswith("test_")}
    for behaviour in SUITE:
        name = behaviour["name"]
        assert name in tested or name in NOT_EXPOSED, f"{name} is neither tested nor named"


def test_store_retrieve(make_store: StoreMaker) -> None:
    store = make_store()
    content = bytes(range(256)) * 40
    handle = store.store(content, "tool:bytes", mime_type="application/octet-stream")
    assert handle["artifactId"] == hashlib.sha256(content).hexdigest()
    assert store.retrieve(handle["artifactId"]) == content


def test_absent(make_store: StoreMaker) -> None:
    assert make_store().retrieve("ab" * 32) is None


def test_dedup(make_store: StoreMaker) -> None:
    store = make_store()
    a = store.store("same content " * 500, "tool:a")
    b = store.store("same content " * 500, "tool:a")
    assert a["artifactId"] == b["artifactId"]
    if isinstance(store, acc.KvStore):
        assert sum(a["artifactId"] in k for k in store.mapping) == 1, "one stored copy"
    if isinstance(store, acc.SqliteStore):
        rows = store.connection.execute("SELECT COUNT(*) FROM acc_artifacts").fetchone()
        assert rows == (1,)


def test_verified_read(make_store: StoreMaker, tmp_path: Path) -> None:
    from test_stores import tamper

    store = make_store()
    handle = store.store("y" * 5000, "tool:y")
    tamper(store, handle["artifactId"], tmp_path)
    with pytest.raises(acc.ContextCompilerError) as e:
        store.retrieve(handle["artifactId"])
    assert e.value.code in ("ARTIFACT_INTEGRITY", "STORE_CORRUPT")


def test_large_value(make_store: StoreMaker) -> None:
    store = make_store()
    content = hashlib.sha256(b"seed").digest() * (3 * 1024 * 1024 // 32)
    handle = store.store(content, "tool:large")
    assert store.retrieve(handle["artifactId"]) == content


def test_concurrent_same(make_store: StoreMaker) -> None:
    store = make_store()
    ids: list[str] = []
    threads = [
        threading.Thread(target=lambda: ids.append(store.store("shared " * 1000, "tool:t")["artifactId"]))
        for _ in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ids) == 6 and len(set(ids)) == 1


def test_concurrent_different(make_store: StoreMaker) -> None:
    store = make_store()
    ids: dict[int, str] = {}

    def put(i: int) -> None:
        ids[i] = store.store(f"content {i} " * 300, "tool:t")["artifactId"]

    threads = [threading.Thread(target=put, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, artifact_id in ids.items():
        assert store.retrieve(artifact_id) == (f"content {i} " * 300).encode()


def test_session_round_trip(make_store: StoreMaker) -> None:
    store = make_store()
    s = acc.Session("round-trip")
    s.record("user_input", {"text": "hello"})
    s.record("tool_success", {"tool": "t", "result": "ok"})
    store.save(s)
    loaded = store.load("round-trip")
    assert loaded is not None and loaded.export_json() == s.export_json()


def test_session_incremental(make_store: StoreMaker) -> None:
    store = make_store()
    s = acc.Session("incremental")
    for i in range(5):
        s.record("user_input", {"text": f"m{i}"})
    assert store.save(s).events_written == 5
    s.record("user_input", {"text": "m5"})
    report = store.save(s)
    assert report.events_written == 1 and not report.rewritten


def test_session_stale(make_store: StoreMaker) -> None:
    store = make_store()
    s = acc.Session("stale")
    s.record("user_input", {"text": "first"})
    store.save(s)
    copy = store.load("stale")
    assert copy is not None
    s.record("user_input", {"text": "second"})
    store.save(s)
    copy.record("user_input", {"text": "other"})
    with pytest.raises(acc.ContextCompilerError) as e:
        store.save(copy)
    assert e.value.code == "STORE_CONFLICT"
    different = acc.Session("stale")
    different.record("user_input", {"text": "a different log"})
    with pytest.raises(acc.ContextCompilerError) as e:
        store.save(different)
    assert e.value.code == "STORE_CONFLICT"
    saved = store.load("stale")
    assert saved is not None and saved.export_json() == s.export_json(), "the saved log as it was"
    assert store.delete_session("stale")
    store.save(different)
    again = store.load("stale")
    assert again is not None and again.events == different.events


def test_session_list_delete(make_store: StoreMaker) -> None:
    store = make_store()
    for sid in ("b", "a"):
        store.save(acc.Session(sid))
    assert store.list_sessions() == ["a", "b"]
    assert store.delete_session("a")
    assert store.list_sessions() == ["b"]


def test_session_ids(make_store: StoreMaker) -> None:
    store = make_store()
    for sid in ("A" * 1024, "語" * 341):
        store.save(acc.Session(sid))
        loaded = store.load(sid)
        assert loaded is not None and loaded.session_id == sid
    assert set(store.list_sessions()) == {"A" * 1024, "語" * 341}
    for bad in ("", "A" * 1025, "a\0b"):
        for action in (
            lambda: store.save(acc.Session.import_json(json.dumps({"format": "agent-context-compiler/session", "version": 1, "sessionId": bad, "events": []}))),
            lambda: store.load(bad),
            lambda: store.delete_session(bad),
            lambda: store.store("x", "t", session_id=bad),
        ):
            with pytest.raises(acc.ContextCompilerError) as e:
                action()
            assert e.value.code in ("INVALID_ARGUMENT", "INVALID_SESSION_IMPORT")
    assert set(store.list_sessions()) == {"A" * 1024, "語" * 341}, "nothing written"
