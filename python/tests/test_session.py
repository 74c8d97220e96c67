"""Sessions: recording, counting, export and import, search, bad input."""

from __future__ import annotations

import json

import pytest

import agent_context_compiler as acc


def test_records_typed_events_counted_once() -> None:
    s = acc.Session("s-1")
    e = s.record("user_input", {"text": "Why did the nightly job fail?"})
    assert e["kind"] == "user_input" and e["data"] == {"text": "Why did the nightly job fail?"}
    assert e["tokenEstimate"] > 0
    s.record("assistant_output", {"text": "Looking."}, token_estimate=7)
    assert len(s) == 2
    assert s.total_tokens == e["tokenEstimate"] + 7
    assert [x["kind"] for x in s.events] == ["user_input", "assistant_output"]
    assert s.session_id == "s-1"


def test_tool_events_are_redacted_unless_told_not_to() -> None:
    s = acc.Session()
    secret = "sk-live-0123456789abcdefghijklmnop"
    s.record("tool_success", {"tool": "env", "result": f"KEY={secret}"})
    s.record("tool_success", {"tool": "env", "result": "plain"}, redact=False)
    assert secret not in s.export_json()
    assert "[REDACTED:" in s.events[0]["data"]["result"]


def test_export_and_import_round_trip() -> None:
    s = acc.Session("round")
    for i in range(20):
        s.record("user_input", {"text": f"message {i}"})
    copy = acc.Session.import_json(s.export_json())
    assert copy.session_id == "round"
    assert copy.events == s.events
    assert copy.total_tokens == s.total_tokens


def test_malformed_imports_name_the_field() -> None:
    for bad in ["not json", "[]", json.dumps({"sessionId": 3, "events": []})]:
        with pytest.raises(acc.ContextCompilerError) as e:
            acc.Session.import_json(bad)
        assert e.value.code in ("INVALID_SESSION_IMPORT", "INVALID_ARGUMENT")


def test_search_ranks_by_bm25() -> None:
    s = acc.Session()
    s.record("user_input", {"text": "the deploy to db-primary failed"})
    s.record("user_input", {"text": "lunch plans"})
    hits = s.search("db-primary", limit=5)
    assert hits and hits[0].position == 0 and hits[0].kind == "user_input"
    assert 0 < hits[0].relevance <= 1
    with pytest.raises(acc.ContextCompilerError) as e:
        s.search("x", limit=0)
    assert e.value.code == "INVALID_ARGUMENT"


def test_usage_is_recorded_and_bounded() -> None:
    s = acc.Session()
    s.record("user_input", {"text": "hi"})
    e = s.record_usage({"prompt_tokens": 10, "completion_tokens": 2})
    assert e["kind"] == "model_usage"


def test_bad_input_has_codes() -> None:
    s = acc.Session()
    with pytest.raises(acc.ContextCompilerError) as e:
        s.record("user_input", {"x": object()})
    assert e.value.code == "NOT_SERIALIZABLE"
    with pytest.raises(acc.ContextCompilerError) as e:
        s.record("user_input", {"text": "x"}, token_estimate=-1)
    assert e.value.code == "INVALID_TOKEN_COUNT"
    with pytest.raises(acc.ContextCompilerError) as e:
        s.record(3, {})  # type: ignore[arg-type]
    assert e.value.code == "INVALID_ARGUMENT"
    with pytest.raises(acc.ContextCompilerError):
        s.record("user_input", float("nan"))
    # Lone surrogates are not UTF-8: refused, and the runtime goes on.
    with pytest.raises(Exception):
        s.record("user_input", {"text": "\ud800"})
    assert len(s) == 0
    s.record("user_input", {"text": "still fine"})
    assert len(s) == 1


def test_a_closed_session_refuses_calls() -> None:
    s = acc.Session()
    s.close()
    with pytest.raises(acc.ContextCompilerError) as e:
        len(s)
    assert e.value.code == "INVALID_ARGUMENT"
    with acc.Session() as t:
        t.record("user_input", {"text": "x"})
