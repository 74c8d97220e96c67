"""Seed 000's own recording pipeline, as the seed writes it (Task 1's
Session/EventLog and Task 2's estimate_tokens), for bench/perf.mjs to time
beside `session.record` on the same trace. The seed imports EvidencePack from
its host project without defining it; a minimal one (an entry appended per
event) stands in for it.

Usage: python3 peer_seed_session.py TRACE.json REPEATS
Prints the fewest seconds one pass over the trace took (the fastest of
REPEATS, as bench/perf.mjs takes its own figures), as JSON.
"""

from __future__ import annotations

import json
import math
import sys
import time
import uuid
from dataclasses import dataclass
from typing import Any


def estimate_tokens(text: str) -> int:
    if not text:
        return 0
    words = len(text.split())
    return math.ceil(words * 1.3)


@dataclass
class SessionEvent:
    event_id: str
    timestamp: float
    kind: str
    data: dict[str, Any]
    token_estimate: int


class EventLog:
    def __init__(self) -> None:
        self.events: list[SessionEvent] = []

    def append(self, kind: str, data: dict[str, Any], token_estimate: int = 0) -> SessionEvent:
        event = SessionEvent(
            event_id=f"{int(time.time() * 1000):012x}-{uuid.uuid4().hex[:12]}",
            timestamp=time.time(),
            kind=kind,
            data=data,
            token_estimate=token_estimate,
        )
        self.events.append(event)
        return event


_KIND_TO_EVIDENCE = {
    "user_input": "input",
    "tool_success": "output",
    "phase_result": "output",
    "assistant_output": "output",
}


class EvidencePack:
    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.entries: list[dict[str, Any]] = []

    def add(self, phase: str, kind: str, data: dict[str, Any]) -> None:
        self.entries.append({"phase": phase, "kind": kind, "data": data, "timestamp": time.time()})


class Session:
    def __init__(self, session_id: str | None = None) -> None:
        self.session_id = session_id or uuid.uuid4().hex[:12]
        self.event_log = EventLog()
        self.evidence = EvidencePack(session_id=self.session_id)

    def record(self, kind: str, data: dict[str, Any], token_estimate: int = 0) -> SessionEvent:
        event = self.event_log.append(kind, data, token_estimate)
        self.evidence.add(kind, _KIND_TO_EVIDENCE.get(kind, "output"), data)
        return event


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        trace = json.load(f)
    repeats = int(sys.argv[2])
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        session = Session()
        for e in trace:
            session.record(e["kind"], {"role": e["role"], "content": e["content"]}, estimate_tokens(e["content"]))
        times.append(time.perf_counter() - t0)
    print(json.dumps({"seconds": min(times), "events": len(session.event_log.events)}))


if __name__ == "__main__":
    main()
