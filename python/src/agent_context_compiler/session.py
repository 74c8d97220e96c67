"""Sessions: append-only event logs with token counts, in the component."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, List, Mapping, Optional

from wasmtime.component import ResourceAny

from ._resource import Resource
from ._runtime import Runtime, runtime
from ._wit import fields, record
from .errors import ContextCompilerError

__all__ = ["Session", "SearchHit"]

Json = Any


def to_json_text(value: Any, what: str) -> str:
    """``value`` as JSON text; what cannot be is ``NOT_SERIALIZABLE``."""
    try:
        return json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ContextCompilerError("NOT_SERIALIZABLE", f"{what} cannot be represented as JSON ({e})") from None


@dataclass(frozen=True)
class SearchHit:
    """An event a search found."""

    event_id: str
    """The event's id."""
    position: int
    """Its position in the session log."""
    kind: str
    """Its kind."""
    score: float
    """Its BM25 score: higher is more relevant."""
    relevance: float
    """The score over the most any event could score for the query: 0 to 1."""
    distinction: float
    """How far the score stands out, in robust standard deviations (0 to 100)."""


class Session(Resource):
    """An event-sourced session: an id and its events.

    ``record`` appends a typed event (``user_input``, ``assistant_output``,
    ``tool_call``, ``tool_success``, ...) counted once, when recorded; tool
    events' outputs, errors and arguments are redacted first. A session
    lives in the component until :meth:`close` (or garbage collection).
    """

    _interface = "sessions"
    _resource = "session"

    def __init__(self, session_id: Optional[str] = None) -> None:
        rt = runtime()
        self._hold(rt, rt.call("sessions", "[constructor]session", session_id))

    @classmethod
    def _adopt(cls, handle: ResourceAny, rt: Runtime) -> "Session":
        session = cls.__new__(cls)
        session._hold(rt, handle)
        return session

    @classmethod
    def import_json(cls, text: str) -> "Session":
        """The session a :meth:`export_json` document (this package's or the
        npm package's ``exportJson``) holds; a malformed one is
        ``INVALID_SESSION_IMPORT`` naming the field."""
        if not isinstance(text, str):
            raise ContextCompilerError("INVALID_ARGUMENT", "import_json takes the exported JSON text")
        rt = runtime()
        return cls._adopt(rt.call("sessions", "[static]session.import-json", text), rt)

    @property
    def session_id(self) -> str:
        """The session's id."""
        return str(self._method("session-id"))

    def record(
        self,
        kind: str,
        data: Json = None,
        *,
        token_estimate: Optional[int] = None,
        redact: bool = True,
    ) -> dict[str, Json]:
        """Records an event of ``kind`` with ``data`` (any JSON value) and
        returns it. ``token_estimate`` defaults to the counter's count;
        with ``redact=False`` a tool event is recorded as given (for a
        caller that redacted it itself)."""
        if token_estimate is not None and (isinstance(token_estimate, bool) or not isinstance(token_estimate, int)):
            raise ContextCompilerError("INVALID_TOKEN_COUNT", "token_estimate must be a non-negative int")
        if token_estimate is not None and token_estimate < 0:
            raise ContextCompilerError("INVALID_TOKEN_COUNT", "token_estimate must be a non-negative int")
        options = record(token_estimate=token_estimate, redact=redact)
        event: dict[str, Json] = json.loads(
            self._method("record-with", _text(kind, "kind"), to_json_text(data, "data"), options)
        )
        return event

    def record_usage(self, usage: Mapping[str, Json], *, counted_tokens: Optional[int] = None) -> dict[str, Json]:
        """Records what a provider reported a model call cost (its
        ``usage`` in any provider's shape) as a ``model_usage`` event;
        later compiles correct their count by it, never above the
        budget."""
        event: dict[str, Json] = json.loads(
            self._method("record-usage", to_json_text(usage, "usage"), record(counted_tokens=counted_tokens))
        )
        return event

    def record_reply(self, reply: Json) -> dict[str, Json]:
        """Records a whole reply from the model (text, tool calls, usage,
        reasoning; or the provider's own response): ``model_usage``, then
        the ``assistant_output``. Returns ``{text, toolCalls, refused,
        usage}``: the calls to run."""
        result: dict[str, Json] = json.loads(self._method("record-reply", to_json_text(reply, "reply")))
        return result

    def record_compaction(self, output: Json, format: str) -> dict[str, Json]:
        """Records a provider's own compaction (``openai-responses`` or
        ``anthropic``) as it came; a compile in that format sends the
        latest one in place of the turns before it."""
        event: dict[str, Json] = json.loads(
            self._method("record-compaction", to_json_text(output, "output"), _text(format, "format"))
        )
        return event

    @property
    def events(self) -> List[dict[str, Json]]:
        """Every event, oldest first."""
        events: List[dict[str, Json]] = json.loads(self._method("events-json"))
        return events

    def __len__(self) -> int:
        return int(self._method("length"))

    @property
    def total_tokens(self) -> int:
        """The sum of the events' token estimates."""
        return int(self._method("total-tokens"))

    def export_json(self) -> str:
        """The whole session as JSON text (the npm package's ``exportJson``)."""
        return str(self._method("export-json"))

    def search(self, query: str, *, limit: int = 10) -> List[SearchHit]:
        """The events matching ``query`` best (BM25 over the session's own
        index), at most ``limit`` (1 to 100), most relevant first."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100:
            raise ContextCompilerError("INVALID_ARGUMENT", "limit must be an int from 1 to 100")
        return [SearchHit(**fields(hit)) for hit in self._method("search", _text(query, "query"), limit)]

    def look_back(self, name: str, arguments: Mapping[str, Json], *, store: Any = None) -> Json:
        """Answers a call of a look-back tool (``search_history`` or
        ``read_artifact``) with its result, redacted; ``read_artifact``
        reads only what this session's own events name, from ``store``
        (none: an empty store, so nothing)."""
        from .stores import scratch_store

        with self._rt.lock:
            self._rt.select(store if store is not None else scratch_store())
            return json.loads(self._method("look-back", _text(name, "name"), to_json_text(arguments, "arguments")))

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()



def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ContextCompilerError("INVALID_ARGUMENT", f"{what} must be a str (got {type(value).__name__})")
    return value
