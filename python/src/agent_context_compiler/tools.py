"""Tools: the host's Python callables, called through the component with a
deadline, recorded as typed events, their outputs normalised (JSON Schema,
secret redaction, summaries)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

from ._resource import Resource
from ._runtime import CallContext, runtime
from ._wit import record
from .compiler import ToolSpec
from .errors import ContextCompilerError
from .session import Session, to_json_text
from .stores import ArtifactStore

__all__ = ["Tool", "SchemaRegistry", "call_tool", "redact"]

Json = Any


@dataclass(frozen=True)
class Tool:
    """A tool the model may call: ``fn(arguments)`` returns its output
    (text, or any JSON value); it may be ``async``. A call past its
    deadline (``timeout_ms``, else the run's) is recorded as a
    ``tool_timeout``; one that raises as a ``tool_error``."""

    name: str
    fn: Callable[[Any], Any]
    description: Optional[str] = None
    parameters: Optional[Mapping[str, Json]] = None
    timeout_ms: Optional[int] = None
    needs_approval: Optional[bool] = None

    @property
    def spec(self) -> ToolSpec:
        """What the request tells the model about it."""
        return ToolSpec(self.name, self.description, self.parameters, self.timeout_ms, self.needs_approval)


class SchemaRegistry(Resource):
    """Output schemas per tool (draft 2020-12 by default, draft 7 by
    ``$schema``): a tool's output is validated against its schema before
    it is recorded."""

    _interface = "normalizer"
    _resource = "schema-registry"

    def __init__(self) -> None:
        rt = runtime()
        self._hold(rt, rt.call("normalizer", "[constructor]schema-registry"))

    def register(self, tool: str, schema: Mapping[str, Json]) -> None:
        """Registers ``tool``'s output schema; an invalid one is
        ``INVALID_SCHEMA``."""
        self._method("register", tool, to_json_text(schema, "schema"))

    def add_resource(self, uri: str, document: Json) -> None:
        """Adds a document schemas can ``$ref`` by ``uri`` (offline)."""
        self._method("add-resource", uri, to_json_text(document, "document"))

    def normalize(self, tool: str, output: str) -> dict[str, Json]:
        """Normalises ``output`` of ``tool``: parsed, validated, redacted,
        summarised (the npm package's ``NormalizedOutput``)."""
        result: dict[str, Json] = json.loads(
            self._method("normalize", tool, output)
        )
        return result


def redact(text: str) -> dict[str, Json]:
    """``text`` with its secrets redacted: ``{text, findings}``."""
    if not isinstance(text, str):
        raise ContextCompilerError("INVALID_ARGUMENT", "redact takes a str")
    result: dict[str, Json] = json.loads(runtime().call("normalizer", "redact", text))
    return result


def call_tool(
    session: Session,
    tool: Tool,
    arguments: Mapping[str, Json],
    *,
    timeout_ms: Optional[int] = None,
    externalize_threshold: Optional[int] = None,
    store: Optional[ArtifactStore] = None,
    schemas: Optional[SchemaRegistry] = None,
    call_id: Optional[str] = None,
    thought_signature: Optional[str] = None,
    reasoning: Optional[Json] = None,
) -> dict[str, Json]:
    """Calls ``tool`` with ``arguments``, recording ``tool_call`` and then
    ``tool_success``, ``tool_error`` or ``tool_timeout`` in ``session``;
    returns the tool event. A failing tool is an event, not an exception.
    Outputs of ``externalize_threshold`` bytes or more (after redaction)
    go to ``store``."""
    if not isinstance(tool, Tool):
        raise ContextCompilerError("INVALID_ARGUMENT", "call_tool takes a Tool")
    if externalize_threshold is not None and store is None:
        raise ContextCompilerError("INVALID_ARGUMENT", "externalize_threshold needs a store")
    options = record(
        timeout_ms=timeout_ms,
        externalize_threshold=externalize_threshold,
        call_id=call_id,
        thought_signature=thought_signature,
        reasoning_json=None if reasoning is None else to_json_text(reasoning, "reasoning"),
    )
    rt = session._rt
    context = CallContext(store=store, tools={tool.name: tool})

    def run() -> Any:
        if store is not None:
            rt.select(store)
        return rt.call(
            "tools",
            "call-tool",
            session._handle,
            None if schemas is None else schemas._handle,
            tool.name,
            to_json_text(arguments, "arguments"),
            options,
        )

    event: dict[str, Json] = json.loads(rt.with_context(context, run))
    return event
