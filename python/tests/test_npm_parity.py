"""Parity with the npm package, run beside it (by Deno, over the built
package in pkg/; see npm_peer.mjs): a session exported by one imports in
the other and compiles to the same request, and the two share one SQLite
file and one directory of files as writers, losing nothing."""

from __future__ import annotations

import json
import math
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

import agent_context_compiler as acc

ROOT = Path(__file__).resolve().parents[2]
DENO = ROOT / "node_modules" / ".bin" / "deno"
PEER = Path(__file__).with_name("npm_peer.mjs")


def npm(*args: str) -> str:
    done = subprocess.run(
        [str(DENO), "run", "--allow-read", "--allow-write", "--allow-env", str(PEER), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def compile_like_the_peer(session: acc.Session) -> acc.CompiledContext:
    compiler = acc.ContextCompiler([acc.HistorySelector(keep_first=1, keep_last=math.inf), acc.Compactor()])
    return compiler.compile(session, 4_000, system_prompt="You are an SRE.", format="openai")


def test_a_session_exported_by_npm_imports_in_python(tmp_path: Path) -> None:
    path = tmp_path / "npm.json"
    npm("export", str(path))
    exported = path.read_text()
    session = acc.Session.import_json(exported)
    assert session.session_id == "from-npm"
    assert session.export_json() == exported, "the same document, byte for byte"
    assert "sk-live-" not in exported
    ours = compile_like_the_peer(session)
    theirs = json.loads(npm("import", str(path)))
    assert ours.to_messages() == theirs["messages"]
    assert ours.token_count == theirs["tokenCount"]


def test_a_session_exported_by_python_imports_in_npm(tmp_path: Path) -> None:
    session = acc.Session("from-python")
    session.record("user_input", {"text": "Where are the backups?"})
    session.record("tool_call", {"tool": "ls", "arguments": {"path": "/backups"}, "call_id": "k"})
    session.record("tool_success", {"tool": "ls", "call_id": "k", "result": "nightly.tar 2 GB\n" * 50})
    session.record("assistant_output", {"text": "In /backups."})
    session.record_usage({"input_tokens": 300, "output_tokens": 4})
    path = tmp_path / "python.json"
    path.write_text(session.export_json())
    theirs = json.loads(npm("import", str(path)))
    assert theirs["sessionId"] == "from-python"
    assert theirs["exported"] == session.export_json()
    ours = compile_like_the_peer(session)
    assert theirs["messages"] == ours.to_messages()
    assert theirs["tokenCount"] == ours.token_count


def two_writers(kind: str, place: Path, python_store: acc.ArtifactStore) -> None:
    """Deno appends 60 events to one session while this process appends 60,
    each syncing after every event (this one starting once Deno's first
    is saved, so that they race); then both read the same 121."""
    session_id = f"shared-{kind}"
    first = acc.Session(session_id)
    first.record("user_input", {"text": "start"})
    python_store.save(first)
    peer: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: peer.update(out=npm("writer", kind, str(place), session_id, "npm", "60")))
    thread.start()
    while thread.is_alive():
        seen = python_store.load(session_id)
        if seen is not None and len(seen) > 1:
            break
    merged = 0
    for i in range(60):
        first.record("user_input", {"text": f"py-{i}"})
        merged += python_store.sync(first).merged
    thread.join()
    assert json.loads(peer["out"]) == {"written": 60}
    assert merged > 0, "the writers raced: this one merged the other's events"
    python_store.sync(first)
    loaded = python_store.load(session_id)
    assert loaded is not None
    texts = [e["data"]["text"] for e in loaded.events]
    expected = {"start", *(f"py-{i}" for i in range(60)), *(f"npm-{i}" for i in range(60))}
    assert sorted(texts) == sorted(expected), "each event exactly once"
    assert [t for t in texts if t.startswith("py-")] == [f"py-{i}" for i in range(60)]
    assert [t for t in texts if t.startswith("npm-")] == [f"npm-{i}" for i in range(60)]
    assert json.loads(npm("read", kind, str(place), session_id)) == texts, "the npm package reads the same log"


def test_python_and_npm_share_one_sqlite_file(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    two_writers("sqlite", db, acc.SqliteStore(db))


def test_python_and_npm_share_one_directory(tmp_path: Path) -> None:
    directory = tmp_path / "files"
    two_writers("files", directory, acc.FileStore(directory))


@pytest.mark.parametrize("kind", ["sqlite", "files"])
def test_an_artifact_stored_by_python_is_read_by_npm_layout(kind: str, tmp_path: Path) -> None:
    place = tmp_path / ("a.db" if kind == "sqlite" else "dir")
    store: acc.ArtifactStore = acc.SqliteStore(place) if kind == "sqlite" else acc.FileStore(place)
    s = acc.Session("with-artifact")
    event = acc.call_tool(s, acc.Tool("dump", lambda a: "line\n" * 5000), {}, externalize_threshold=1024, store=store)
    store.save(s)
    npm("writer", kind, str(place), "with-artifact", "npm", "1")
    loaded = store.load("with-artifact")
    assert loaded is not None and loaded.events[-1]["data"]["text"] == "npm-0"
    assert store.retrieve(event["artifact"]["artifactId"]) == ("line\n" * 5000).encode()
