"""A consumer of the package, checked with ``mypy --strict``: the public
API's types as an application uses them."""

from __future__ import annotations

import asyncio
import math
import sqlite3
from typing import Any

import agent_context_compiler as acc


async def fetch(args: dict[str, Any]) -> dict[str, Any]:
    await asyncio.sleep(0)
    return {"ok": True, "args": args}


def model(request: dict[str, Any], step: int) -> object:
    return "done" if step else {"toolCalls": [{"id": "1", "name": "fetch", "arguments": {}}]}


def main() -> int:
    session: acc.Session = acc.Session("typed")
    event: dict[str, Any] = session.record("user_input", {"text": "hi"})
    store: acc.ArtifactStore = acc.SqliteStore(sqlite3.connect(":memory:", isolation_level=None))
    compiler = acc.ContextCompiler(
        [
            acc.HistorySelector(keep_first=1, keep_last=math.inf),
            acc.ArtifactAttacher(store, threshold_bytes=4096),
            acc.Compactor(),
            acc.HistoryRecall(),
            acc.MemoryPreloader([acc.Memory("k", "v")], top_k=5),
        ]
    )
    ctx: acc.CompiledContext = compiler.compile(session, 8_000, system_prompt="sys", format="anthropic")
    rules: list[dict[str, Any]] = acc.check_request(ctx.to_messages(), format="anthropic")
    report: acc.SaveReport = store.save(session)
    hits: list[acc.SearchHit] = session.search("hi", limit=5)
    result = acc.run_compiled("go", session, model, budget=8_000, tools=[acc.Tool("fetch", fetch)])
    try:
        session.record("user_input", {"text": "x"}, token_estimate=-1)
    except acc.ContextCompilerError as e:
        code: str = e.code
        assert code
    return len(rules) + report.events_written + len(hits) + len(result) + len(event)


if __name__ == "__main__":
    main()


def extras() -> None:
    from agent_context_compiler.langchain import ContextMiddleware

    bus = acc.EventBus(max_queue=10)
    handler_id: int = bus.on("task", lambda event: None)
    failures: list[acc.HandlerFailure] = bus.drain()
    window = acc.ContextWindow(4_000, acc.ZoneBudgets(system=0.2, persistent=0.1, working=0.35, recent=0.35))
    level: acc.CompactionLevel = window.compaction_level
    middleware = ContextMiddleware(session=lambda thread_id: acc.Session(thread_id), budget=8_000)
    assert handler_id >= 0 and not failures and level and middleware.name
