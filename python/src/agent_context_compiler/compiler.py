"""The budget-aware compiler: its built-in processors, its options, the
compiled context, and the request formats it renders."""

from __future__ import annotations

import difflib
import json
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, List, Literal, Mapping, Optional, Sequence, TypedDict, Union, Unpack

from wasmtime.component import Record, Variant

from ._runtime import CallContext, runtime
from ._wit import record
from .errors import ContextCompilerError
from .session import Session, to_json_text
from .stores import ArtifactStore, MemoryStore

__all__ = [
    "Format",
    "Layout",
    "HistorySelector",
    "Compactor",
    "MemoryPreloader",
    "ArtifactAttacher",
    "HistoryRecall",
    "Memory",
    "ToolSpec",
    "Processor",
    "PromptOptions",
    "CompileOptions",
    "ContextCompiler",
    "CompiledContext",
    "check_request",
    "to_messages",
    "look_back_tool_definitions",
    "recommended_processors",
]

Json = Any
Format = Literal["plain", "openai", "anthropic", "ai-sdk", "openai-responses", "gemini"]
"""The request shapes: ``[{role, content}]``, Chat Completions, Anthropic
Messages, the AI SDK's ``{instructions, messages}``, Responses, Gemini."""
Layout = Literal["zoned", "single-system"]
"""The four zones with a stable prefix (recommended), or one system message."""

_FORMATS = ("plain", "openai", "anthropic", "ai-sdk", "openai-responses", "gemini")
_U32 = 2**32 - 1

Embedder = Callable[[List[str], str], Any]
"""``embed(texts, role)`` -> one vector per text (``role`` is ``query`` or
``passage``); may be ``async``."""
TextModel = Callable[[str, int], Any]
"""``complete(prompt, max_tokens)`` -> text; may be ``async``."""


def _invalid(message: str) -> ContextCompilerError:
    return ContextCompilerError("INVALID_ARGUMENT", message)


def _count(value: Any, what: str, *, limit: int = _U32, infinite: bool = False) -> int:
    if infinite and isinstance(value, float) and math.isinf(value) and value > 0:
        return limit
    if isinstance(value, bool) or not isinstance(value, int) or value < 0 or value > limit:
        raise _invalid(f"{what} must be an int from 0 to {limit}" + (" or math.inf" if infinite else ""))
    return value


def _format(value: Optional[str], what: str = "format") -> Optional[str]:
    if value is None:
        return None
    if value not in _FORMATS:
        raise _invalid(f"{what} must be one of {', '.join(_FORMATS)} (got {value!r})")
    return value


@dataclass(frozen=True)
class HistorySelector:
    """Keeps the first ``keep_first`` turns and the most recent
    ``keep_last`` (``math.inf``: all) that fit the budget."""

    keep_first: int = 2
    keep_last: Union[int, float] = 5

    def _wit(self) -> Variant:
        return Variant(
            "history-selector",
            record(
                keep_first=_count(self.keep_first, "keep_first"),
                keep_last=_count(self.keep_last, "keep_last", infinite=True),
            ),
        )


@dataclass(frozen=True)
class Compactor:
    """Merges consecutive turns of one role; in the zoned layout masks old
    tool outputs and folds old turns into a summary as the window fills
    (80/90/95%), down to ``target`` of the budget. With ``summarizer``
    (``complete(prompt, max_tokens)``) the summary is the model's, else a
    deterministic digest."""

    target: Optional[float] = None
    summarizer: Optional[TextModel] = None

    def _wit(self) -> Variant:
        return Variant("compactor", record(target=_ratio(self.target, "target"), summarizer=self.summarizer is not None))


@dataclass(frozen=True)
class Memory:
    """A memory the preloader can recall."""

    key: str
    content: str
    category: str = "core"


@dataclass(frozen=True)
class MemoryPreloader:
    """Recalls the ``top_k`` memories most relevant to the latest user
    input; ``pin`` keeps them in the PERSISTENT zone for the session."""

    memories: Sequence[Memory] = ()
    top_k: int = 5
    pin: bool = False

    def _wit(self) -> Variant:
        return Variant("memory-preloader", record(top_k=_count(self.top_k, "top_k"), pin=bool(self.pin)))


@dataclass(frozen=True)
class ArtifactAttacher:
    """Keeps tool results of ``threshold_bytes`` or more in ``store``, the
    context holding a summary and the artifact's handle; results the model
    has not read yet stay whole while the budget holds them
    (``keep_unread``)."""

    store: ArtifactStore
    threshold_bytes: int = 4096
    keep_unread: bool = True

    def _wit(self) -> Variant:
        if not isinstance(self.store, ArtifactStore):
            raise _invalid("ArtifactAttacher takes the store outputs go to (a MemoryStore, FileStore, ...)")
        return Variant(
            "artifact-attacher",
            record(
                threshold_bytes=_count(self.threshold_bytes, "threshold_bytes", limit=2**64 - 1),
                keep_unread=bool(self.keep_unread),
            ),
        )


@dataclass(frozen=True)
class HistoryRecall:
    """Brings back turns that left the window when the newest user message
    points at them (zoned layout, after the compactor). ``embedder`` ranks
    by meaning too (fused with the lexical ranking); ``store`` reads the
    session's stored tool outputs whole."""

    share: Optional[float] = None
    min_distinction: Optional[float] = None
    min_relevance: Optional[float] = None
    matches: Optional[int] = None
    neighbours: Optional[int] = None
    turn_tokens: Optional[int] = None
    store: Optional[ArtifactStore] = None
    embedder: Optional[Embedder] = None
    embedder_timeout_ms: Optional[int] = None

    def _wit(self) -> Variant:
        def opt(v: Optional[int], what: str) -> Optional[int]:
            return None if v is None else _count(v, what)

        return Variant(
            "history-recall",
            record(
                share=_ratio(self.share, "share"),
                min_distinction=_number(self.min_distinction, "min_distinction"),
                min_relevance=_ratio(self.min_relevance, "min_relevance"),
                matches=opt(self.matches, "matches"),
                neighbours=opt(self.neighbours, "neighbours"),
                turn_tokens=opt(self.turn_tokens, "turn_tokens"),
                artifact_store=self.store is not None,
                embedder=self.embedder is not None,
                embedder_timeout_ms=None
                if self.embedder_timeout_ms is None
                else _count(self.embedder_timeout_ms, "embedder_timeout_ms", limit=2**64 - 1),
            ),
        )


Processor = Union[HistorySelector, Compactor, MemoryPreloader, ArtifactAttacher, HistoryRecall]
"""A built-in processor. Processors written in Python are not supported:
the pipeline runs inside the component."""


def _number(value: Optional[float], what: str) -> Optional[float]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _invalid(f"{what} must be a finite number")
    return float(value)


def _ratio(value: Optional[float], what: str) -> Optional[float]:
    return _number(value, what)


@dataclass(frozen=True)
class ToolSpec:
    """A tool the request offers (counted in the SYSTEM zone as the format
    sends it)."""

    name: str
    description: Optional[str] = None
    parameters: Optional[Mapping[str, Json]] = None
    timeout_ms: Optional[int] = None
    needs_approval: Optional[bool] = None

    def _wit(self) -> Record:
        return record(
            name=self.name,
            description=self.description,
            parameters_json=None if self.parameters is None else to_json_text(self.parameters, "parameters"),
            timeout_ms=None if self.timeout_ms is None else _count(self.timeout_ms, "timeout_ms", limit=2**64 - 1),
            needs_approval=self.needs_approval,
        )


def recommended_processors(
    store: Optional[ArtifactStore] = None, memories: Sequence[Memory] = ()
) -> List[Processor]:
    """The recommended pipeline (the npm package's quick start): the first
    turn pinned and all that fits, large outputs kept in ``store`` (a new
    :class:`MemoryStore` by default), compaction, recall, memories."""
    return [
        HistorySelector(keep_first=1, keep_last=math.inf),
        ArtifactAttacher(store if store is not None else MemoryStore(), threshold_bytes=4096),
        Compactor(),
        HistoryRecall(),
        MemoryPreloader(memories, top_k=5),
    ]


def _one(values: Iterable[Any], what: str) -> Any:
    chosen = None
    for v in values:
        if v is None:
            continue
        if chosen is not None and v is not chosen:
            raise _invalid(f"the processors name two different {what}: the component uses one per compile")
        chosen = v
    return chosen


def _json_or_none(value: Any, what: str) -> Optional[str]:
    return None if value is None else to_json_text(value, what)


class PromptOptions(TypedDict, total=False):
    """What a compile (or each compile of a run) lays out besides the
    session: every key may be left out."""

    system_prompt: str
    """The system prompt (SYSTEM zone; default empty)."""
    policies: Sequence[str]
    """Active policies (SYSTEM zone, ``## Policies``)."""
    tool_definitions: Sequence[Mapping[str, Json]]
    """Tool definitions shown in the prompt, each with a ``name``."""
    user_preferences: Mapping[str, Json]
    """User preferences (SYSTEM zone)."""
    goal: str
    """The goal (PERSISTENT zone, restated at the end)."""
    state_digest: Mapping[str, Json]
    """A digest of the agent's state (PERSISTENT zone)."""
    task_state: str
    """The task state (RECENT zone)."""
    reserve_output: int
    """Tokens of the budget kept for the reply (default 0)."""
    usage_margin: float
    """The share of the budget held back once reported usage corrects the
    count (default 0.05)."""


class CompileOptions(PromptOptions, total=False):
    """:meth:`ContextCompiler.compile`'s options."""

    tools: Sequence[ToolSpec]
    """The tools the request offers, counted as ``format`` sends them."""
    format: Format
    """The request shape (default ``plain``: no overhead counted)."""
    model: str
    """The model's name: images and files are counted by its rule."""


def known_options(options: Mapping[str, Any], allowed: Any, where: str) -> None:
    """A ``TypeError`` for an option ``allowed`` (a ``TypedDict``) does not
    have, naming the closest one: a misspelt option is never ignored."""
    names = set(allowed.__required_keys__) | set(allowed.__optional_keys__)
    for name in options:
        if name not in names:
            close = difflib.get_close_matches(name, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise TypeError(f"{where}() got an unexpected keyword argument {name!r}{hint}")


def prompt_fields(options: PromptOptions) -> dict[str, Any]:
    """The WIT fields of ``options`` that the compile and run options share."""
    reserve = options.get("reserve_output")
    definitions = options.get("tool_definitions")
    for name in ("policies", "tool_definitions"):
        if isinstance(options.get(name), (str, bytes, Mapping)):
            raise _invalid(f"{name} is a sequence (a list), not a {type(options.get(name)).__name__}")
    for name in ("system_prompt", "goal", "task_state"):
        if options.get(name) is not None and not isinstance(options.get(name), str):
            raise _invalid(f"{name} must be a str")
    if not all(isinstance(p, str) for p in options.get("policies", ())):
        raise _invalid("policies must be strs")
    return {
        "system_prompt": options.get("system_prompt"),
        "policies": list(options.get("policies", ())),
        "tool_definitions_json": _json_or_none(None if definitions is None else list(definitions), "tool_definitions"),
        "user_preferences_json": _json_or_none(options.get("user_preferences"), "user_preferences"),
        "goal": options.get("goal"),
        "state_digest_json": _json_or_none(options.get("state_digest"), "state_digest"),
        "task_state": options.get("task_state"),
        "reserve_output": None if reserve is None else _count(reserve, "reserve_output", limit=2**64 - 1),
        "usage_margin": _number(options.get("usage_margin"), "usage_margin"),
    }


class ContextCompiler:
    """Compiles a session into a context that never exceeds its budget, in
    the ``zoned`` layout (a stable prefix for prompt caches; recommended)
    or ``single-system``."""

    def __init__(
        self,
        processors: Optional[Sequence[Processor]] = None,
        *,
        layout: Layout = "zoned",
        media_store: Optional[ArtifactStore] = None,
    ) -> None:
        if layout not in ("zoned", "single-system"):
            raise _invalid(f"layout must be 'zoned' or 'single-system' (got {layout!r})")
        self.processors: List[Processor] = list(recommended_processors() if processors is None else processors)
        for p in self.processors:
            if not isinstance(p, (HistorySelector, Compactor, MemoryPreloader, ArtifactAttacher, HistoryRecall)):
                raise _invalid(
                    f"{type(p).__name__} is not a built-in processor (processors written in Python are not supported)"
                )
        self.layout: Layout = layout
        self.media_store = media_store
        self.store: Optional[ArtifactStore] = _one(
            [getattr(p, "store", None) for p in self.processors] + [media_store], "stores"
        )
        self._summarizer = _one([p.summarizer for p in self.processors if isinstance(p, Compactor)], "summarizers")
        self._embedder = _one([p.embedder for p in self.processors if isinstance(p, HistoryRecall)], "embedders")
        memories = [m for p in self.processors if isinstance(p, MemoryPreloader) for m in p.memories]
        self._memories = [record(key=m.key, content=m.content, category=m.category) for m in memories]
        self._wit_processors = [p._wit() for p in self.processors]

    def _spec(self) -> Record:
        """The compiler as the runner's ``compiler-spec``."""
        return record(layout=self.layout, processors=self._wit_processors, media_store=self.media_store is not None)

    def compile(self, session: Session, budget: int, **options: Unpack[CompileOptions]) -> "CompiledContext":
        """The context of ``session`` under ``budget`` tokens (never above
        it, in the format's own overhead and the tools it sends), with the
        :class:`CompileOptions` given as keywords."""
        if not isinstance(session, Session):
            raise _invalid("compile takes a Session")
        known_options(options, CompileOptions, "compile")
        budget = _count(budget, "budget", limit=2**64 - 1)
        format = _format(options.get("format"))
        model = options.get("model")
        request = record(
            layout=self.layout,
            media_store=self.media_store is not None,
            tools=[_tool_spec(t)._wit() for t in options.get("tools", ())],
            format=format,
            model=model,
            **{**prompt_fields(options), "system_prompt": options.get("system_prompt", "")},
        )
        rt = session._rt
        context = CallContext(store=self.store, llm=self._summarizer, embedder=self._embedder)

        def run() -> Any:
            if self.store is not None:
                rt.select(self.store)
            return rt.call(
                "compiler", "compile-with", session._handle, budget, request, self._wit_processors, self._memories
            )

        compiled = rt.with_context(context, run)
        return CompiledContext(
            session,
            str(getattr(compiled, "context-json")),
            str(getattr(compiled, "messages-json")),
            int(getattr(compiled, "token-count")),
            format or "plain",
            model,
        )


def _tool_spec(tool: Any) -> ToolSpec:
    if isinstance(tool, ToolSpec):
        return tool
    spec = getattr(tool, "spec", None)
    if isinstance(spec, ToolSpec):
        return spec
    raise _invalid(f"tools takes ToolSpec or Tool values (got {type(tool).__name__})")


class CompiledContext:
    """A compiled context: what it holds, its exact token count, and the
    request it renders in each format."""

    def __init__(
        self, session: Session, context_json: str, messages_json: str, token_count: int, fmt: str, model: Optional[str]
    ) -> None:
        self._session = session
        self.context_json = context_json
        """The working context as JSON (the npm package's ``toJSON()``)."""
        self._messages_json = messages_json
        self.token_count = token_count
        """The exact token count of the messages; never above the budget."""
        self.format = fmt
        """The format compiled for."""
        self.model = model
        """The model compiled for."""
        self._context: Optional[dict[str, Json]] = None
        self._ledger: Optional[dict[str, Json]] = None

    @property
    def context(self) -> dict[str, Json]:
        """The working context: history, memories, artifacts, zones."""
        if self._context is None:
            self._context = json.loads(self.context_json)
        return self._context

    @property
    def budget(self) -> int:
        """The budget compiled under."""
        return int(self.context.get("budget", 0))

    @property
    def dropped(self) -> List[dict[str, Json]]:
        """What the budget left out, and why."""
        return list(self.context.get("dropped", []))

    @property
    def recalled(self) -> List[dict[str, Json]]:
        """Earlier turns brought back, with their scores."""
        return list(self.context.get("recalled", []))

    def to_messages(self, format: Optional[Format] = None, *, model: Optional[str] = None) -> Json:
        """The request in ``format`` (default: the format compiled for)
        for ``model``: a list for ``plain`` and ``openai``, the request
        object for the others."""
        fmt = _format(format) or self.format
        chosen_model = model if model is not None else self.model
        if fmt == self.format and chosen_model == self.model:
            return json.loads(self._messages_json)
        return to_messages(self.context_json, format=fmt, model=chosen_model)  # type: ignore[arg-type]

    @property
    def ledger(self) -> dict[str, Json]:
        """What the context holds and why, and what it left out:
        ``included`` (per part: zone, event ids, reason, tokens, adding up
        to ``token_count``) and ``excluded``."""
        if self._ledger is None:
            rt = self._session._rt
            self._ledger = json.loads(rt.call("compiler", "ledger", self._session._handle, self.context_json))
        return self._ledger


def to_messages(context_json: str, *, format: Format = "plain", model: Optional[str] = None) -> Json:
    """Renders a compiled context's JSON in ``format``."""
    text = runtime().call("compiler", "to-messages", context_json, record(format=_format(format), model=model))
    return json.loads(text)


def check_request(request: Json, *, format: Format, model: Optional[str] = None) -> List[dict[str, Json]]:
    """The rules ``request`` (in ``format``'s shape) breaks, each ``{rule,
    path, message}``: empty when the provider accepts it."""
    text = runtime().call(
        "compiler", "check-request", to_json_text(request, "request"), record(format=_format(format), model=model)
    )
    rules: List[dict[str, Json]] = json.loads(text)
    return rules


def look_back_tool_definitions() -> List[dict[str, Json]]:
    """The look-back tools (``search_history``, ``read_artifact``) as a run
    offers them: ``[{name, description, parameters}]``."""
    defs: List[dict[str, Json]] = json.loads(runtime().call("compiler", "look-back-tool-definitions"))
    return defs

