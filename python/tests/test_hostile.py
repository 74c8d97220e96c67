"""Hostile callables and arguments: nothing a tool, a model, a mapping, a
connection or a caller does poisons the runtime."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

import agent_context_compiler as acc
from agent_context_compiler._runtime import runtime
from conftest import scripted


def alive() -> None:
    s = acc.Session()
    s.record("user_input", {"text": "still alive"})
    assert len(s) == 1


def test_outputs_and_errors_that_are_not_utf8_are_replaced_not_fatal() -> None:
    s = acc.Session()
    event = acc.call_tool(s, acc.Tool("ls", lambda a: "caf\udce9.txt"), {})
    assert event["kind"] == "tool_success" and "caf\ufffd.txt" in event["result"]

    def bad(args: Any) -> str:
        raise OSError("cannot open caf\udce9")

    assert acc.call_tool(s, acc.Tool("open", bad), {})["kind"] == "tool_error"
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    assert acc.call_tool(s, acc.Tool("deep", lambda a: deep), {})["kind"] == "tool_error"
    alive()


def test_arguments_the_component_does_not_take_are_invalid_arguments() -> None:
    s = acc.Session()
    for action in (
        lambda: s.record("user_\udce9", {}),
        lambda: acc.redact("x\udce9"),
        lambda: acc.ContextCompiler().compile(s, 1_000, goal=123),  # type: ignore[arg-type]
        lambda: acc.ContextCompiler().compile(s, 1_000, model=4),  # type: ignore[arg-type]
        lambda: acc.ContextCompiler().compile(s, 1_000, policies="be nice"),  # type: ignore[arg-type]
        lambda: acc.ContextCompiler().compile(s, 1_000, system_prompt=None),  # type: ignore[arg-type]
        lambda: acc.run_compiled("hi", s, scripted("x"), budget=1_000, look_back_tools=1),  # type: ignore[arg-type]
    ):
        with pytest.raises(acc.ContextCompilerError) as e:
            action()
        assert e.value.code == "INVALID_ARGUMENT", e.value
    with pytest.raises(TypeError):
        acc.ArtifactAttacher()  # type: ignore[call-arg]
    alive()


def test_a_handle_closed_before_its_call_is_refused_not_fatal() -> None:
    s = acc.Session()
    handle = s._handle
    s.close()
    with pytest.raises(acc.ContextCompilerError) as e:
        runtime().call("sessions", "[method]session.length", handle)
    assert e.value.code == "INVALID_ARGUMENT"
    alive()


def test_a_callable_calling_the_package_is_refused_at_once() -> None:
    s = acc.Session()
    started = time.perf_counter()
    event = acc.call_tool(s, acc.Tool("redacting", lambda a: acc.redact("x")["text"]), {}, timeout_ms=5_000)
    assert event["kind"] == "tool_error" and "cannot call the package" in str(event["error"])
    assert time.perf_counter() - started < 2


def test_an_interrupt_in_a_tool_ends_the_run_and_the_runtime_lives_on() -> None:
    s = acc.Session()
    asked: list[int] = []

    def stop(args: Any) -> str:
        raise KeyboardInterrupt

    def model(request: dict[str, Any], step: int) -> Any:
        asked.append(step)
        return {"toolCalls": [{"id": "k", "name": "stop", "arguments": {}}]} if step == 0 else "again"

    with pytest.raises(KeyboardInterrupt):
        acc.run_compiled("go", s, model, budget=4_000, tools=[acc.Tool("stop", stop)], tool_timeout_ms=None)  # type: ignore[arg-type]
    assert asked == [0], "the model was not asked again"
    alive()


def test_sqlite_connections_with_their_own_factories(tmp_path: Path) -> None:
    rows = sqlite3.connect(tmp_path / "rows.db", isolation_level=None, check_same_thread=False)
    rows.row_factory = sqlite3.Row
    store = acc.SqliteStore(rows)
    s = acc.Session("rows")
    s.record("user_input", {"text": "hi"})
    store.save(s)
    loaded = store.load("rows")
    assert loaded is not None and len(loaded) == 1
    raw = sqlite3.connect(tmp_path / "raw.db")
    raw.text_factory = bytes
    with pytest.raises(acc.ContextCompilerError) as e:
        acc.SqliteStore(raw)
    assert e.value.code == "INVALID_ARGUMENT"
