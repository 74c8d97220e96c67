"""The golden fixtures (tests/fixtures/golden, shared with the Rust, npm
and wasmtime host tests) compile to the same messages, counts, drops and
renderings in every format through the Python package."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

import agent_context_compiler as acc

GOLDEN = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "golden"
BASE_MS = 1_700_000_000_000
FORMATS = ["openai", "anthropic", "ai-sdk", "openai-responses", "gemini"]


def export_doc(fixture: dict[str, Any]) -> str:
    """The export document a fixture's events stand for (ids and times fixed)."""
    events = [
        {
            "eventId": f"{BASE_MS + i:012x}-{i:012x}",
            "timestamp": float(BASE_MS + i),
            "kind": e["kind"],
            "data": e["data"],
            "tokenEstimate": e.get("tokenEstimate", 0),
        }
        for i, e in enumerate(fixture["events"])
    ]
    doc = {"format": "agent-context-compiler/session", "version": 1, "sessionId": fixture["sessionId"], "events": events}
    return json.dumps(doc)


def limit(value: Any, default: int) -> int | float:
    if value == "Infinity":
        return math.inf
    return default if value is None else int(value)


def processors(fixture: dict[str, Any], store: acc.ArtifactStore) -> list[acc.Processor]:
    memories = [acc.Memory(*m) for m in fixture.get("memories", [])]
    made: list[acc.Processor] = []
    for p in fixture["compile"]["processors"]:
        kind = p["type"]
        if kind == "history_selector":
            made.append(acc.HistorySelector(int(limit(p.get("keepFirst"), 2)), limit(p.get("keepLast"), 5)))
        elif kind == "compactor":
            made.append(acc.Compactor())
        elif kind == "memory_preloader":
            made.append(acc.MemoryPreloader(memories, top_k=int(limit(p.get("topK"), 5)), pin=p.get("pin") is True))
        elif kind == "artifact_attacher":
            made.append(
                acc.ArtifactAttacher(
                    store, threshold_bytes=int(limit(p.get("thresholdBytes"), 1024)), keep_unread=p.get("keepUnread", True)
                )
            )
        elif kind == "history_recall":
            made.append(acc.HistoryRecall())
        else:
            raise AssertionError(f"unknown processor {kind}")
    return made


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.json")), ids=lambda p: p.stem)
def test_golden_fixture_compiles_the_same(path: Path) -> None:
    fixture = json.loads(path.read_text())
    session = acc.Session.import_json(export_doc(fixture))
    before = len(session)
    searched = None
    if "search" in fixture:
        q = fixture["search"]
        hits = session.search(q["query"], limit=q["limit"])
        searched = [{"eventId": h.event_id, "position": h.position, "kind": h.kind} for h in hits]
    c = fixture["compile"]
    o = c.get("options", {})
    compiler = acc.ContextCompiler(
        processors(fixture, acc.MemoryStore()), layout="zoned" if c.get("layout") == "zoned" else "single-system"
    )
    ctx = compiler.compile(
        session,
        c["budget"],
        system_prompt=c.get("systemPrompt", ""),
        policies=o.get("policies", []),
        tool_definitions=o.get("toolDefinitions", []),
        user_preferences=o.get("userPreferences"),
        goal=o.get("goal"),
        state_digest=o.get("stateDigest"),
        task_state=o.get("taskState"),
    )
    context = ctx.context
    actual: dict[str, Any] = {
        "messages": ctx.to_messages(),
        "tokenCount": ctx.token_count,
        "artifactRefs": context.get("artifactRefs", []),
        "memoryKeys": [m["key"] for m in context.get("memoryHits", [])],
        "dropped": context.get("dropped", []),
        "recordedKinds": [e["kind"] for e in session.events[before:]],
        "zoneUsage": context.get("zoneUsage"),
        "compactionLevel": context.get("compactionLevel"),
        "summary": context.get("summary"),
        "formats": {f: ctx.to_messages(f) for f in FORMATS},  # type: ignore[arg-type]
    }
    if context.get("recalled"):
        actual["recalled"] = [r["eventId"] for r in context["recalled"]]
    if searched is not None:
        actual["search"] = searched
    expected = fixture["expected"]
    assert json.dumps(actual, sort_keys=True) == json.dumps(expected, sort_keys=True)
    assert sum(part["tokens"] for part in ctx.ledger["included"]) == ctx.token_count
