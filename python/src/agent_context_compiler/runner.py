"""The turn runner: one user turn of an agent loop, recorded end to end
(the npm package's ``runCompiled``), with the model, tools, guard and
approval policy as Python callables.

The component calls them one at a time: tool calls of one step run one
after another here (the npm package runs them concurrently).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Union, Unpack

from wasmtime.component import Record, Variant

from ._runtime import CallContext
from ._wit import record
from .compiler import ContextCompiler, Format, Memory, PromptOptions, _count, _format, known_options, prompt_fields
from .errors import ContextCompilerError
from .session import Session, to_json_text
from .stores import ArtifactStore, scratch_store
from .tools import SchemaRegistry, Tool

__all__ = ["ApprovalDecision", "RunOptions", "run_compiled", "resume_compiled", "arun_compiled", "aresume_compiled", "Model"]

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


class RunOptions(PromptOptions, total=False):
    """:func:`run_compiled`'s and :func:`resume_compiled`'s options
    besides the budget; every key may be left out."""

    tools: Sequence[Tool]
    """The tools the model is offered."""
    compiler: ContextCompiler
    """The compiler (default: the recommended pipeline)."""
    format: Format
    """The shape of the request the model gets (default ``openai``)."""
    model_name: str
    """The model's name: images and files are counted by its rule."""
    tool_choice: ToolChoice
    """Which tools the model may or must call."""
    max_steps: int
    """Model calls at most (default 10)."""
    model_timeout_ms: int
    """How long one model call may take; past it the run ends with
    ``MODEL_FAILED``, what it recorded kept (default: as long as it
    takes)."""
    tool_timeout_ms: int
    """The deadline of a tool whose ``timeout_ms`` is unset (default 30000)."""
    look_back_tools: bool
    """Offer ``search_history`` and ``read_artifact`` (default True)."""
    guard: Callable[[str], Any]
    """Decides whether the input may reach the model: ``True``/``False`` or
    ``{allowed, threatLevel?, reason?}``."""
    memories: Sequence[Memory]
    """Memories the recommended compiler recalls for each compile."""
    store: ArtifactStore
    """Where outputs of ``externalize_threshold`` bytes or more go."""
    externalize_threshold: int
    """The size from which outputs are stored (default 1024)."""
    needs_approval: Callable[[Dict[str, Json]], Any]
    """Whether a call (``{id?, name, arguments}``) waits for a person."""
    schemas: SchemaRegistry
    """Output schemas the tools' outputs are validated against."""


def _run(
    func: str,
    input: Optional[str],
    session: Session,
    model: Model,
    budget: int,
    approvals: Sequence[ApprovalDecision],
    o: RunOptions,
) -> Dict[str, Json]:
    known_options(o, RunOptions, f"{func}_compiled")
    if not isinstance(session, Session):
        raise ContextCompilerError("INVALID_ARGUMENT", "the run takes a Session")
    if not callable(model):
        raise ContextCompilerError("INVALID_ARGUMENT", "model must be callable: model(request, step)")
    tools = o.get("tools", ())
    by_name: Dict[str, Tool] = {}
    for tool in tools:
        if not isinstance(tool, Tool):
            raise ContextCompilerError("INVALID_ARGUMENT", f"tools takes Tool values (got {type(tool).__name__})")
        by_name[tool.name] = tool
    compiler, store = o.get("compiler"), o.get("store")
    run_store = store
    if compiler is not None and compiler.store is not None:
        if store is not None and store is not compiler.store:
            raise ContextCompilerError("INVALID_ARGUMENT", "the run's store and its compiler's differ")
        run_store = compiler.store
    guard, needs_approval, schemas = o.get("guard"), o.get("needs_approval"), o.get("schemas")

    def count(name: str, limit: int = 2**64 - 1) -> Optional[int]:
        value = o.get(name)
        return None if value is None else _count(value, name, limit=limit)

    options = record(
        budget=_count(budget, "budget", limit=2**64 - 1),
        format=_format(o.get("format", "openai")),
        model_name=o.get("model_name"),
        tools=[t.spec._wit() for t in tools],
        tool_choice=_tool_choice(o.get("tool_choice")),
        max_steps=count("max_steps", 2**32 - 1),
        tool_timeout_ms=count("tool_timeout_ms"),
        look_back_tools=o.get("look_back_tools"),
        guard=guard is not None,
        memory=[record(key=m.key, content=m.content, category=m.category) for m in o.get("memories", ())],
        compiler=None if compiler is None else compiler._spec(),
        artifact_store=store is not None,
        externalize_threshold=count("externalize_threshold"),
        needs_approval=needs_approval is not None,
        approvals=[a._wit() for a in approvals],
        **prompt_fields(o),
    )
    rt = session._rt
    context = CallContext(
        store=run_store,
        tools=by_name,
        model=model,
        model_timeout_ms=count("model_timeout_ms"),
        guard=guard,
        approval=needs_approval,
        llm=None if compiler is None else compiler._summarizer,
        embedder=None if compiler is None else compiler._embedder,
    )
    normalizer = None if schemas is None else schemas._handle

    def run() -> Any:
        # A run that names no store gets an empty one: its look-back tools
        # never read what another caller stored.
        rt.select(run_store if run_store is not None else scratch_store())
        if input is None:
            return rt.call("runner", func, session._handle, normalizer, options)
        return rt.call("runner", func, input, session._handle, normalizer, options)

    result: Dict[str, Json] = json.loads(rt.with_context(context, run))
    return result


def run_compiled(
    input: str, session: Session, model: Model, *, budget: int, **options: Unpack[RunOptions]
) -> Dict[str, Json]:
    """Runs one user turn: records ``input`` in ``session``, then
    compiles under ``budget``, calls ``model`` and runs the tools it asks
    for until it answers without tool calls (or ``max_steps``), with the
    :class:`RunOptions` given as keywords. Returns the npm package's
    ``RunResult`` without ``session`` (``result``, ``stopReason``,
    ``steps``, ``ledger``, ...). Every step is recorded, so a failure
    (``MODEL_FAILED``, ``GUARD_FAILED``) loses nothing."""
    if not isinstance(input, str):
        raise ContextCompilerError("INVALID_ARGUMENT", "input must be a str")
    return _run("run", input, session, model, budget, (), options)


def resume_compiled(
    session: Session,
    model: Model,
    *,
    approvals: Sequence[ApprovalDecision],
    budget: int,
    **options: Unpack[RunOptions],
) -> Dict[str, Json]:
    """Resumes a run that stopped with ``stopReason: "approval"``: records
    ``approvals`` (each must name a call that waits), runs the approved
    calls, answers the rejected ones with their reason, then goes on as
    :func:`run_compiled` does."""
    return _run("resume", None, session, model, budget, approvals, options)


async def arun_compiled(
    input: str, session: Session, model: Model, *, budget: int, **options: Unpack[RunOptions]
) -> Dict[str, Json]:
    """:func:`run_compiled` from inside a running event loop: the run
    goes through ``asyncio.to_thread``, so the loop is not blocked."""
    import asyncio

    return await asyncio.to_thread(lambda: run_compiled(input, session, model, budget=budget, **options))


async def aresume_compiled(
    session: Session,
    model: Model,
    *,
    approvals: Sequence[ApprovalDecision],
    budget: int,
    **options: Unpack[RunOptions],
) -> Dict[str, Json]:
    """:func:`resume_compiled` through ``asyncio.to_thread``."""
    import asyncio

    return await asyncio.to_thread(
        lambda: resume_compiled(session, model, approvals=approvals, budget=budget, **options)
    )

