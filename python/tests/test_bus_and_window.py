"""The event bus with Python handlers, and the four-zone window."""

from __future__ import annotations

from typing import Any

import pytest

import agent_context_compiler as acc


def test_the_bus_dispatches_in_order_and_isolates_failures() -> None:
    bus = acc.EventBus(max_queue=3)
    seen: list[str] = []
    persisted: list[str] = []

    def broken(event: dict[str, Any]) -> None:
        raise ValueError("handler down")

    async def later(event: dict[str, Any]) -> None:
        seen.append("async:" + event["type"])

    bus.set_persister(lambda e: persisted.append(e["type"]))
    first = bus.on("task", lambda e: seen.append(e["data"]["n"]))
    bus.on("task", broken)
    bus.on("task", later)
    assert all(bus.emit({"type": "task", "agentId": "a", "data": {"n": n}}) for n in ("1", "2", "3"))
    assert not bus.emit({"type": "task", "agentId": "a", "data": {"n": "4"}}), "the queue is full: dropped"
    assert bus.pending == 3
    failures = bus.drain()
    assert seen == ["1", "async:task", "2", "async:task", "3", "async:task"]
    assert persisted == ["task"] * 3
    assert [f.handler.startswith("broken") and f.message.endswith("ValueError: handler down") for f in failures] == [True] * 3
    assert bus.off(first) and not bus.off(first)
    stats = bus.stats
    assert stats["dropped"] == 1
    with pytest.raises(acc.ContextCompilerError) as e:
        bus.emit({"agentId": "a"})
    assert e.value.code == "INVALID_ARGUMENT"


def test_a_session_feeds_an_attached_bus() -> None:
    bus = acc.EventBus()
    got: list[dict[str, Any]] = []
    bus.on("message_received", got.append)
    session = acc.Session("fed")
    bus.attach(session, agent_id="agent-1", user_id="u1")
    session.record("user_input", {"text": "hello"})
    assert bus.drain() == []
    assert got[0]["data"]["text"] == "hello" and got[0]["agentId"] == "agent-1"


def test_the_window_never_exceeds_its_size() -> None:
    window = acc.ContextWindow(2_000, acc.ZoneBudgets())
    window.set_system_prompt("You are an SRE.")
    window.set_goal("Find why the nightly job fails")
    for i in range(200):
        window.append_message("user", f"message {i} " * 20)
    window.add_recent_message("user", "the latest question")
    compiled = window.compile()
    assert compiled["totalTokens"] <= 2_000 and compiled["messages"]
    assert window.compaction_level in ("none", "light", "full", "emergency")
    window.emergency_compact("summary of it all")
    assert window.stats
    with pytest.raises(acc.ContextCompilerError):
        acc.ContextWindow(0)
