"""The event bus: a bounded FIFO queue dispatched to Python handlers, each
failure isolated, counted and reported (the component's ``bus``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional

from ._resource import Resource
from ._runtime import CallContext, runtime
from ._wit import fields, record
from .errors import ContextCompilerError
from .session import Session, to_json_text

__all__ = ["EventBus", "HandlerFailure", "Handler"]

Handler = Callable[[Dict[str, Any]], Any]
"""A handler: called with the event (``{type, agentId, sessionId, data,
timestamp}``); what it raises is a failure of its own, reported by
:meth:`EventBus.drain`. May be ``async``."""


@dataclass(frozen=True)
class HandlerFailure:
    """A handler (or the persister) that failed on an event."""

    handler: str
    """The handler's name (``persister`` for the persister)."""
    event_type: str
    """The event's type."""
    message: str
    """What the handler raised."""


class EventBus(Resource):
    """A bus the host drives: :meth:`emit` queues, :meth:`drain`
    dispatches every queued event to its handlers in FIFO order, in this
    thread. ``max_queue`` events may wait (default 1000); more are
    dropped."""

    _interface = "bus"
    _resource = "event-bus"

    def __init__(self, *, max_queue: Optional[int] = None) -> None:
        rt = runtime()
        self._hold(rt, rt.call("bus", "[static]event-bus.create", record(max_queue=max_queue)))
        self._handlers: Dict[str, Handler] = {}
        self._names: Dict[int, str] = {}
        self._next = 0

    def _name(self, handler: Handler) -> str:
        if not callable(handler):
            raise ContextCompilerError("INVALID_ARGUMENT", "a handler must be callable")
        self._next += 1
        name = f"{getattr(handler, '__name__', 'handler')}#{self._next}"
        self._handlers[name] = handler
        return name

    def on(self, event_type: str, handler: Handler) -> int:
        """Registers ``handler`` for the events of ``event_type`` (matched
        exactly); returns its id."""
        name = self._name(handler)
        handler_id = int(self._method("on", event_type, name))
        self._names[handler_id] = name
        return handler_id

    def off(self, handler_id: int) -> bool:
        """Unregisters a handler; ``False`` if it was not registered."""
        removed = bool(self._method("off", handler_id))
        name = self._names.pop(handler_id, None)
        if name is not None:
            self._handlers.pop(name, None)
        return removed

    def set_persister(self, handler: Optional[Handler]) -> None:
        """Sets (or with ``None`` removes) the persister: called for every
        event before the event's handlers."""
        self._method("set-persister", None if handler is None else self._name(handler))

    def emit(self, event: Mapping[str, Any]) -> bool:
        """Queues ``{type, agentId, sessionId?, data?}`` (stamped by the
        bus); ``False`` when the queue is full and it was dropped."""
        return bool(self._method("emit", to_json_text(event, "event")))

    @property
    def pending(self) -> int:
        """Events waiting in the queue."""
        return int(self._method("pending"))

    def drain(self) -> List[HandlerFailure]:
        """Dispatches every queued event (and those emitted meanwhile);
        returns the failures reported while doing so."""
        failures = self._rt.with_context(CallContext(bus_handlers=self._handlers), lambda: self._method("drain"))
        return [HandlerFailure(**fields(f)) for f in failures]

    @property
    def stats(self) -> Dict[str, Any]:
        """The counters (the npm package's ``BusStats``)."""
        found: Dict[str, Any] = json.loads(self._method("stats-json"))
        return found

    def attach(
        self,
        session: Session,
        *,
        agent_id: str,
        user_id: Optional[str] = None,
        user_display_name: Optional[str] = None,
        episode_id: Optional[str] = None,
    ) -> None:
        """Feeds the bus from ``session``: its ``user_input`` events emit
        ``message_received``, its ``assistant_output`` events
        ``turn_completed``."""
        options = record(
            agent_id=agent_id, user_id=user_id, user_display_name=user_display_name, episode_id=episode_id
        )
        self._method("attach", session._handle, options)
