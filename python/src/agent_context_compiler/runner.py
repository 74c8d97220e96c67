"""The turn runner: one user turn of an agent loop, recorded end to end
(the npm package's ``runCompiled``), with the model, tools, guard and
approval policy as Python callables.

The component calls them one at a time: tool calls of one step run one
after another here (the npm package runs them concurrently).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Union

from wasmtime.component import Record, Variant

from ._runtime import CallContext
from ._wit import record
from .compiler import ContextCompiler, Format, Memory, _count, _format, _json_or_none, _number
from .errors import ContextCompilerError
from .session import Session, to_json_text
from .stores import ArtifactStore
from .tools import SchemaRegistry, Tool

__all__ = ["ApprovalDecision", "run_compiled", "resume_compiled", "arun_compiled", "aresume_compiled", "Model"]

Json = Any
Model = Callable[[Dict[str, Json], int], Any]
"""``model(request, step)``: ``request`` is ``{messages, tools,
toolChoice?}`` in the run's format; returns text, ``{text?, toolCalls?,
usage?}``, or the provider's own response. May be ``async``."""
ToolChoice = Union[str, Mapping[str, str]]
"""``"auto"``, ``"required"``, ``"none"``, or ``{"name": tool}``."""


@dataclass(frozen=True)
class ApprovalDecision:
    """A person's decision on a call that waits (``resume_compiled``)."""

    call_id: str
    approve: bool
    reason: Optional[str] = None
    arguments: Optional[Mapping[str, Json]] = None

    def _wit(self) -> Record:
        return record(
            call_id=self.call_id,
            approve=bool(self.approve),
            reason=self.reason,
            arguments_json=None if self.arguments is None else to_json_text(self.arguments, "arguments"),
        )


def _tool_choice(choice: Optional[ToolChoice]) -> Optional[Variant]:
    if choice is None:
        return None
    if choice in ("auto", "required", "none"):
        return Variant(str(choice))
    if isinstance(choice, Mapping) and isinstance(choice.get("name"), str):
        return Variant("tool", choice["name"])
    raise ContextCompilerError("INVALID_ARGUMENT", "tool_choice must be 'auto', 'required', 'none' or {'name': tool}")


def _run(
    func: str,
    input: Optional[str],
    session: Session,
    model: Model,
    *,
    budget: int,
    tools: Sequence[Tool],
    compiler: Optional[ContextCompiler],
    system_prompt: Optional[str],
    policies: Sequence[str],
    tool_definitions: Optional[Sequence[Mapping[str, Json]]],
    user_preferences: Optional[Mapping[str, Json]],
    goal: Optional[str],
    state_digest: Optional[Mapping[str, Json]],
    task_state: Optional[str],
    format: Format,
    model_name: Optional[str],
    reserve_output: Optional[int],
    usage_margin: Optional[float],
    tool_choice: Optional[ToolChoice],
    max_steps: Optional[int],
    tool_timeout_ms: Optional[int],
    look_back_tools: Optional[bool],
    guard: Optional[Callable[[str], Any]],
    memories: Sequence[Memory],
    store: Optional[ArtifactStore],
    externalize_threshold: Optional[int],
    needs_approval: Optional[Callable[[Dict[str, Json]], Any]],
    approvals: Sequence[ApprovalDecision],
    schemas: Optional[SchemaRegistry],
) -> Dict[str, Json]:
    if not isinstance(session, Session):
        raise ContextCompilerError("INVALID_ARGUMENT", "the run takes a Session")
    if not callable(model):
        raise ContextCompilerError("INVALID_ARGUMENT", "model must be callable: model(request, step)")
    by_name: Dict[str, Tool] = {}
    for tool in tools:
        if not isinstance(tool, Tool):
            raise ContextCompilerError("INVALID_ARGUMENT", f"tools takes Tool values (got {type(tool).__name__})")
        by_name[tool.name] = tool
    run_store = store
    if compiler is not None and compiler.store is not None:
        if store is not None and store is not compiler.store:
            raise ContextCompilerError("INVALID_ARGUMENT", "the run's store and its compiler's differ")
        run_store = compiler.store
    options = record(
        budget=_count(budget, "budget", limit=2**64 - 1),
        system_prompt=system_prompt,
        policies=list(policies),
        tool_definitions_json=_json_or_none(
            None if tool_definitions is None else list(tool_definitions), "tool_definitions"
        ),
        user_preferences_json=_json_or_none(user_preferences, "user_preferences"),
        goal=goal,
        state_digest_json=_json_or_none(state_digest, "state_digest"),
        task_state=task_state,
        format=_format(format),
        model_name=model_name,
        reserve_output=None if reserve_output is None else _count(reserve_output, "reserve_output", limit=2**64 - 1),
        usage_margin=_number(usage_margin, "usage_margin"),
        tools=[t.spec._wit() for t in tools],
        tool_choice=_tool_choice(tool_choice),
        max_steps=None if max_steps is None else _count(max_steps, "max_steps"),
        tool_timeout_ms=None if tool_timeout_ms is None else _count(tool_timeout_ms, "tool_timeout_ms", limit=2**64 - 1),
        look_back_tools=look_back_tools,
        guard=guard is not None,
        memory=[record(key=m.key, content=m.content, category=m.category) for m in memories],
        compiler=None if compiler is None else compiler._spec(),
        artifact_store=store is not None,
        externalize_threshold=None
        if externalize_threshold is None
        else _count(externalize_threshold, "externalize_threshold", limit=2**64 - 1),
        needs_approval=needs_approval is not None,
        approvals=[a._wit() for a in approvals],
    )
    rt = session._rt
    context = CallContext(
        store=run_store,
        tools=by_name,
        model=model,
        guard=guard,
        approval=needs_approval,
        llm=None if compiler is None else compiler._summarizer,
        embedder=None if compiler is None else compiler._embedder,
    )
    normalizer = None if schemas is None else schemas._handle

    def run() -> Any:
        if run_store is not None:
            rt.select(run_store)
        if input is None:
            return rt.call("runner", func, session._handle, normalizer, options)
        return rt.call("runner", func, input, session._handle, normalizer, options)

    result: Dict[str, Json] = json.loads(rt.with_context(context, run))
    return result


def run_compiled(
    input: str,
    session: Session,
    model: Model,
    *,
    budget: int,
    tools: Sequence[Tool] = (),
    compiler: Optional[ContextCompiler] = None,
    system_prompt: Optional[str] = None,
    policies: Sequence[str] = (),
    tool_definitions: Optional[Sequence[Mapping[str, Json]]] = None,
    user_preferences: Optional[Mapping[str, Json]] = None,
    goal: Optional[str] = None,
    state_digest: Optional[Mapping[str, Json]] = None,
    task_state: Optional[str] = None,
    format: Format = "openai",
    model_name: Optional[str] = None,
    reserve_output: Optional[int] = None,
    usage_margin: Optional[float] = None,
    tool_choice: Optional[ToolChoice] = None,
    max_steps: Optional[int] = None,
    tool_timeout_ms: Optional[int] = None,
    look_back_tools: Optional[bool] = None,
    guard: Optional[Callable[[str], Any]] = None,
    memories: Sequence[Memory] = (),
    store: Optional[ArtifactStore] = None,
    externalize_threshold: Optional[int] = None,
    needs_approval: Optional[Callable[[Dict[str, Json]], Any]] = None,
    schemas: Optional[SchemaRegistry] = None,
) -> Dict[str, Json]:
    """Runs one user turn: records ``input`` in ``session``, then
    compiles under ``budget``, calls ``model`` and runs the tools it asks
    for until it answers without tool calls (or ``max_steps``). Returns
    the npm package's ``RunResult`` without ``session`` (``result``,
    ``stopReason``, ``steps``, ``ledger``, ...). Every step is recorded,
    so a failure (``MODEL_FAILED``, ``GUARD_FAILED``) loses nothing."""
    if not isinstance(input, str):
        raise ContextCompilerError("INVALID_ARGUMENT", "input must be a str")
    return _run("run", input, session, model, **_options(locals()))


def resume_compiled(
    session: Session,
    model: Model,
    *,
    approvals: Sequence[ApprovalDecision],
    budget: int,
    tools: Sequence[Tool] = (),
    compiler: Optional[ContextCompiler] = None,
    system_prompt: Optional[str] = None,
    policies: Sequence[str] = (),
    tool_definitions: Optional[Sequence[Mapping[str, Json]]] = None,
    user_preferences: Optional[Mapping[str, Json]] = None,
    goal: Optional[str] = None,
    state_digest: Optional[Mapping[str, Json]] = None,
    task_state: Optional[str] = None,
    format: Format = "openai",
    model_name: Optional[str] = None,
    reserve_output: Optional[int] = None,
    usage_margin: Optional[float] = None,
    tool_choice: Optional[ToolChoice] = None,
    max_steps: Optional[int] = None,
    tool_timeout_ms: Optional[int] = None,
    look_back_tools: Optional[bool] = None,
    guard: Optional[Callable[[str], Any]] = None,
    memories: Sequence[Memory] = (),
    store: Optional[ArtifactStore] = None,
    externalize_threshold: Optional[int] = None,
    needs_approval: Optional[Callable[[Dict[str, Json]], Any]] = None,
    schemas: Optional[SchemaRegistry] = None,
) -> Dict[str, Json]:
    """Resumes a run that stopped with ``stopReason: "approval"``: records
    ``approvals`` (each must name a call that waits), runs the approved
    calls, answers the rejected ones with their reason, then goes on as
    :func:`run_compiled` does."""
    return _run("resume", None, session, model, **_options(locals()))


def _options(given: Dict[str, Any]) -> Dict[str, Any]:
    options = {k: v for k, v in given.items() if k not in ("input", "session", "model")}
    options.setdefault("approvals", ())
    return options


async def arun_compiled(input: str, session: Session, model: Model, **options: Any) -> Dict[str, Json]:
    """:func:`run_compiled` from inside a running event loop: the run
    goes through ``asyncio.to_thread``, so the loop is not blocked."""
    return await asyncio.to_thread(run_compiled, input, session, model, **options)


async def aresume_compiled(session: Session, model: Model, **options: Any) -> Dict[str, Json]:
    """:func:`resume_compiled` through ``asyncio.to_thread``."""
    return await asyncio.to_thread(resume_compiled, session, model, **options)

