"""ContextMiddleware in LangChain's create_agent: a 30-turn tool loop with
LangChain's fake chat model and a LangGraph checkpointer; every event
recorded once, every call within budget, no secret checkpointed."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Iterator, List

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

import agent_context_compiler as acc
from agent_context_compiler.langchain import METADATA_KEY, ContextMiddleware

SECRET = "sk-live-0123456789abcdefghijklmnop"
SEEN: List[List[BaseMessage]] = []


class ToolCallingFake(GenericFakeChatModel):
    """The fake chat model, which raises on bind_tools, taking tools (it
    answers from its script whatever they are) and keeping what it got."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: List[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        SEEN.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


@tool
def read_env(service: str) -> str:
    """Reads a service's environment and recent log."""
    return f"API_KEY={SECRET}\n" + f"{service}: request took 30s\n" * 200


@tool
def broken(service: str) -> str:
    """Always fails."""
    raise RuntimeError(f"cannot reach {service}")


def script(turns: int) -> Iterator[AIMessage]:
    for i in range(turns):
        name = "broken" if i == 7 else "read_env"
        yield AIMessage(content="", tool_calls=[{"id": f"call-{i}", "name": name, "args": {"service": f"svc{i}"}}])
        yield AIMessage(content=f"svc{i} is slow.", usage_metadata={"input_tokens": 900, "output_tokens": 5, "total_tokens": 905})


def test_a_thirty_turn_agent_loop_is_recorded_once_within_budget_and_redacted() -> None:
    SEEN.clear()
    sessions: dict[str, acc.Session] = {}
    store = acc.MemoryStore()
    budget = 3_000
    middleware = ContextMiddleware(
        session=lambda thread: sessions.setdefault(thread, acc.Session(thread)), budget=budget, store=store
    )
    checkpointer = InMemorySaver()
    agent = create_agent(
        model=ToolCallingFake(messages=script(30)),
        tools=[read_env, broken],
        middleware=[middleware],
        checkpointer=checkpointer,
        system_prompt="You are an SRE.",
    )
    config: Any = {"configurable": {"thread_id": "t-1"}}
    for i in range(30):
        agent.invoke({"messages": [{"role": "user", "content": f"Why is svc{i} slow?"}]}, config)

    session = sessions["t-1"]
    kinds = [e["kind"] for e in session.events]
    assert kinds.count("user_input") == 30
    assert kinds.count("tool_call") == 30
    assert kinds.count("tool_success") == 29 and kinds.count("tool_error") == 1
    assert kinds.count("assistant_output") == 30
    assert kinds.count("model_usage") == 30
    ids = [e["data"]["message_id"] for e in session.events if isinstance(e["data"], dict) and "message_id" in e["data"]]
    assert len(ids) == len(set(ids)), "each message recorded once"

    state = agent.get_state(config).values["messages"]
    replies = [m for m in state if isinstance(m, AIMessage)]
    assert len(replies) == 60
    for m in replies:
        assert m.response_metadata[METADATA_KEY]["tokenCount"] <= budget
    assert len(SEEN) == 60
    assert max(len(m) for m in SEEN) < len(state), "the model gets the compiled window, not the whole thread"

    checkpointed = json.dumps([str(m.content) for m in state])
    assert SECRET not in checkpointed and "[REDACTED:" in checkpointed
    assert not any(SECRET.encode() in repr(v).encode() for v in checkpointer.storage.values())
    assert SECRET not in session.export_json()
    saved = store.load("t-1")
    assert saved is not None and len(saved) == len(session), "synced after every step"


def test_the_async_path_and_a_misconfigured_middleware() -> None:
    SEEN.clear()
    session = acc.Session("async")
    agent = create_agent(
        model=ToolCallingFake(messages=script(2)),
        tools=[read_env],
        middleware=[ContextMiddleware(session=session, budget=4_000)],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "a"}}

    async def run() -> None:
        for i in range(2):
            await agent.ainvoke({"messages": [{"role": "user", "content": f"turn {i}"}]}, config)

    asyncio.run(run())
    assert [e["kind"] for e in session.events].count("assistant_output") == 2
    with pytest.raises(acc.ContextCompilerError):
        ContextMiddleware(session=session, budget=1_000, format="anthropic")


@tool(response_format="content_and_artifact")
def fetch(service: str) -> tuple[str, dict[str, Any]]:
    """Fetches a service's status, with the raw response as an artifact."""
    if service == "secret":
        return f"token {SECRET}", {"raw": SECRET}
    return "all good", {"raw": "status 200"}


def test_a_result_recording_left_unchanged_keeps_its_artifact_and_a_redacted_one_loses_it() -> None:
    def replies() -> Iterator[AIMessage]:
        for i, service in enumerate(("plain", "secret")):
            yield AIMessage(content="", tool_calls=[{"id": f"f{i}", "name": "fetch", "args": {"service": service}}])
            yield AIMessage(content="done")

    agent = create_agent(
        model=ToolCallingFake(messages=replies()),
        tools=[fetch],
        middleware=[ContextMiddleware(session=acc.Session("artifacts"), budget=4_000)],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "x"}}
    for i in range(2):
        agent.invoke({"messages": [{"role": "user", "content": f"check {i}"}]}, config)
    results = [m for m in agent.get_state(config).values["messages"] if m.type == "tool"]
    assert results[0].content == "all good" and results[0].artifact == {"raw": "status 200"}
    assert SECRET not in str(results[1].content) and results[1].artifact is None
