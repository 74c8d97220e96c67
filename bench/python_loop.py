"""The Python package's bench (run by bench/python.mjs in the test venv):
cold start in fresh interpreters, and compile latency on the tool-heavy
loop, beside LangChain Python's trim_messages counting with tiktoken.

    python bench/python_loop.py <loop.json>   -> one JSON object on stdout
"""

from __future__ import annotations

import gc
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List

COLD_OURS = """
import agent_context_compiler as acc
s = acc.Session()
s.record("user_input", {"text": "Why did the nightly job fail?"})
acc.ContextCompiler().compile(s, 32_000, system_prompt="You are an SRE.", format="openai").to_messages()
"""

COLD_PEER = """
import tiktoken
from langchain_core.messages import HumanMessage, SystemMessage, trim_messages
enc = tiktoken.get_encoding("cl100k_base")
trim_messages([SystemMessage("You are an SRE."), HumanMessage("Why did the nightly job fail?")], max_tokens=32_000,
    strategy="last", include_system=True, token_counter=lambda ms: sum(len(enc.encode(str(m.content))) + 3 for m in ms))
"""


def wall_ms(code: str, env: Dict[str, str], runs: int) -> float:
    """The median wall time of ``runs`` fresh interpreters running ``code``."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def quantiles(xs: List[float]) -> Dict[str, float]:
    s = sorted(xs)
    return {"p50": s[len(s) // 2], "p95": s[min(len(s) - 1, int(0.95 * len(s)))]}


def ours(plan: Dict[str, Any]) -> Dict[str, Any]:
    import agent_context_compiler as acc

    budget = plan["budget"]
    session = acc.Session()
    store = acc.MemoryStore()
    compiler = acc.ContextCompiler(
        [
            acc.HistorySelector(keep_first=1, keep_last=math.inf),
            acc.ArtifactAttacher(store, threshold_bytes=4096),
            acc.Compactor(),
        ]
    )
    tools = [acc.ToolSpec(t["name"], t["description"], t["parameters"]) for t in plan["tools"]]
    ms: List[float] = []
    over = 0

    def compile_once() -> None:
        nonlocal over
        gc.collect()
        start = time.perf_counter()
        ctx = compiler.compile(session, budget, system_prompt=plan["system"], tools=tools, format="openai")
        ctx.to_messages()
        ms.append((time.perf_counter() - start) * 1000)
        over += ctx.token_count > budget

    n = 0
    for turn in plan["turns"]:
        session.record("user_input", {"text": turn["user"]})
        compile_once()
        if turn["calls"]:
            session.record("assistant_output", {"text": turn["step"]})
            for call in turn["calls"]:
                n += 1
                output = call["output"]
                acc.call_tool(
                    session,
                    acc.Tool(call["name"], lambda args, output=output: output),
                    call["args"],
                    externalize_threshold=4096,
                    store=store,
                    call_id=f"call_{n}",
                )
            compile_once()
        session.record("assistant_output", {"text": turn["reply"]})
    return {**quantiles(ms), "calls": len(ms), "over": over}


def peer(plan: Dict[str, Any]) -> Dict[str, Any]:
    import tiktoken
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage, trim_messages

    enc = tiktoken.get_encoding("cl100k_base")
    budget = plan["budget"]
    counted: Dict[int, int] = {}

    def tokens(m: BaseMessage) -> int:
        found = counted.get(id(m))
        if found is None:
            text = str(m.content)
            for c in getattr(m, "tool_calls", None) or []:
                text += c["name"] + json.dumps(c["args"])
            found = counted[id(m)] = len(enc.encode(text, disallowed_special=())) + 3
        return found

    counter: Callable[[List[BaseMessage]], int] = lambda msgs: sum(tokens(m) for m in msgs)  # noqa: E731
    messages: List[BaseMessage] = [SystemMessage(plan["system"])]
    ms: List[float] = []
    n = 0

    def trim() -> None:
        gc.collect()
        start = time.perf_counter()
        trim_messages(messages, max_tokens=budget, strategy="last", include_system=True, token_counter=counter)
        ms.append((time.perf_counter() - start) * 1000)

    for turn in plan["turns"]:
        messages.append(HumanMessage(turn["user"]))
        trim()
        if turn["calls"]:
            calls = []
            for call in turn["calls"]:
                n += 1
                calls.append({"id": f"call_{n}", "name": call["name"], "args": call["args"]})
            messages.append(AIMessage(content=turn["step"], tool_calls=calls))
            for call, made in zip(turn["calls"], calls):
                messages.append(ToolMessage(content=call["output"], tool_call_id=made["id"]))
            trim()
        messages.append(AIMessage(turn["reply"]))
    return {**quantiles(ms), "calls": len(ms)}


def main() -> None:
    plan = json.loads(open(sys.argv[1]).read())
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as cold_cache:
        cold = {
            "python": wall_ms("pass", env, 5),
            "ours": wall_ms(COLD_OURS, env, 5),
            "ours_uncached": wall_ms(COLD_OURS, {**env, "AGENT_CONTEXT_COMPILER_CACHE": cold_cache}, 1),
            "peer": wall_ms(COLD_PEER, env, 5),
        }
    print(json.dumps({"cold": cold, "ours": ours(plan), "peer": peer(plan)}))


if __name__ == "__main__":
    main()
