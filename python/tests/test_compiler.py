"""The compiler: within budget in every format, the provider's rules
held, the ledger adding up, processors' host callables, bad options."""

from __future__ import annotations

import math
from typing import Any

import pytest

import agent_context_compiler as acc

FORMATS = ["plain", "openai", "anthropic", "ai-sdk", "openai-responses", "gemini"]


def long_session(turns: int = 120) -> acc.Session:
    s = acc.Session()
    for i in range(turns):
        s.record("user_input", {"text": f"question {i} about the nightly job and db-primary " * 3})
        s.record("tool_call", {"tool": "read_logs", "arguments": {"day": i}, "call_id": f"c{i}"})
        s.record("tool_success", {"tool": "read_logs", "call_id": f"c{i}", "result": f"log line {i} " * 600})
        s.record("assistant_output", {"text": f"answer {i}"})
    return s


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_is_within_budget_and_accepted(fmt: str) -> None:
    s = long_session()
    store = acc.MemoryStore()
    compiler = acc.ContextCompiler(acc.recommended_processors(store))
    tools = [acc.ToolSpec("read_logs", "Reads logs", {"type": "object", "properties": {"day": {"type": "integer"}}})]
    for budget in (1_500, 8_000, 30_000):
        ctx = compiler.compile(s, budget, system_prompt="You are an SRE.", tools=tools, format=fmt)  # type: ignore[arg-type]
        assert 0 < ctx.token_count <= budget
        request = ctx.to_messages()
        if fmt != "plain":
            assert acc.check_request(request, format=fmt) == []  # type: ignore[arg-type]
        included = ctx.ledger["included"]
        assert sum(part["tokens"] for part in included) == ctx.token_count
    assert store.mapping, "large outputs went to the store"


def test_to_messages_renders_other_formats_from_the_context() -> None:
    s = long_session(10)
    ctx = acc.ContextCompiler().compile(s, 20_000, system_prompt="You are an SRE.", format="openai")
    anthropic = ctx.to_messages("anthropic", model="claude-sonnet-4-5")
    assert set(anthropic) >= {"system", "messages"}
    assert acc.to_messages(ctx.context_json, format="anthropic", model="claude-sonnet-4-5") == anthropic
    assert acc.check_request({"messages": [{"role": "assistant", "content": "x"}]}, format="anthropic")


def test_single_system_layout_and_the_selector() -> None:
    s = long_session(30)
    ctx = acc.ContextCompiler([acc.HistorySelector(keep_first=1, keep_last=3)], layout="single-system").compile(
        s, 100_000, system_prompt="sys"
    )
    messages = ctx.to_messages()
    assert messages[0]["role"] == "system"
    assert ctx.ledger["excluded"], "what the selector left out is reported"
    assert len(messages) < 30


def test_bad_options_and_processors_are_refused() -> None:
    s = long_session(1)
    with pytest.raises(acc.ContextCompilerError) as e:
        acc.ContextCompiler().compile(s, 0)
    assert e.value.code == "INVALID_BUDGET"
    with pytest.raises(TypeError):
        acc.ContextCompiler().compile(s, 1000, sytem_prompt="typo")  # type: ignore[call-arg]
    with pytest.raises(acc.ContextCompilerError) as e:
        acc.ContextCompiler([object()])  # type: ignore[list-item]
    assert e.value.code == "INVALID_ARGUMENT" and "Python" in e.value.message
    with pytest.raises(acc.ContextCompilerError):
        acc.ContextCompiler(
            [acc.ArtifactAttacher(acc.MemoryStore()), acc.HistoryRecall(store=acc.MemoryStore())]
        )
    with pytest.raises(acc.ContextCompilerError):
        acc.ContextCompiler().compile(s, 1000, format="openia")  # type: ignore[arg-type]
    with pytest.raises(acc.ContextCompilerError):
        acc.ContextCompiler([acc.HistorySelector(keep_last=-1)])
    with pytest.raises(acc.ContextCompilerError) as e:
        acc.ContextCompiler().compile(s, 5, system_prompt="x" * 1000)
    assert e.value.code == "BUDGET_TOO_SMALL"


def test_memories_are_recalled() -> None:
    s = acc.Session()
    s.record("user_input", {"text": "Where does the nightly job write?"})
    memories = [acc.Memory("oncall", "The nightly job writes to db-primary"), acc.Memory("food", "Lunch is at noon")]
    ctx = acc.ContextCompiler(acc.recommended_processors(memories=memories)).compile(s, 4_000)
    assert "db-primary" in ctx.context_json


def test_the_embedder_is_asked_with_roles_and_its_failure_falls_back() -> None:
    s = long_session(60)
    s.record("user_input", {"text": "what did question 3 find?"})
    roles: list[str] = []

    def embed(texts: list[str], role: str) -> list[list[float]]:
        roles.append(role)
        return [[1.0, float(len(t) % 7), 0.5] for t in texts]

    recall = acc.HistoryRecall(embedder=embed, min_distinction=0)
    compiler = acc.ContextCompiler([acc.HistorySelector(1, math.inf), acc.Compactor(), recall])
    compiler.compile(s, 3_000)
    assert "query" in roles and "passage" in roles

    def broken(texts: list[str], role: str) -> Any:
        raise RuntimeError("embedder down")

    ctx = acc.ContextCompiler(
        [acc.HistorySelector(1, math.inf), acc.Compactor(), acc.HistoryRecall(embedder=broken, min_distinction=0)]
    ).compile(s, 3_000)
    assert ctx.token_count <= 3_000


def test_the_summarizer_writes_the_compaction_summary() -> None:
    s = long_session(80)
    prompts: list[int] = []

    async def summarize(prompt: str, max_tokens: int) -> str:
        prompts.append(max_tokens)
        return "SUMMARY: the nightly job failed on db-primary"

    compiler = acc.ContextCompiler([acc.HistorySelector(1, math.inf), acc.Compactor(summarizer=summarize)])
    ctx = compiler.compile(s, 4_000)
    assert ctx.token_count <= 4_000
    assert prompts and "SUMMARY" in ctx.context_json
