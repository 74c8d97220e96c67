"""``ContextMiddleware`` for LangChain's ``create_agent`` (langchain 1.x, an
optional dependency: ``pip install agent-context-compiler[langchain]``).

Every model call is compiled from the thread's session under ``budget``:
the model gets the compiled messages and system message, while the
checkpointed thread is left as it is. The state's messages not recorded
yet are recorded first (by message id), the model's reply is recorded with
its text, calls and usage, and each result of the agent's tools is
recorded and handed back redacted, so the checkpointer keeps it redacted.
Tool messages that reach the state another way, and the model's own call
arguments, are redacted in the session only. The npm
package's ``contextMiddleware`` does the same; this one compiles in the
``openai`` format for every model, and does not record
``humanInTheLoopMiddleware``'s decisions.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid
import weakref
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple, Union

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.config import get_config
from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from .compiler import CompiledContext, ContextCompiler, ToolSpec
from .errors import ContextCompilerError
from .session import Session
from .stores import ArtifactStore

__all__ = ["ContextMiddleware", "to_langchain_messages", "METADATA_KEY"]

METADATA_KEY = "agent_context_compiler"
"""Where a reply's ``response_metadata`` holds what its compile held."""

SessionSource = Union[Session, Callable[[str], Session]]
"""A session, or ``thread_id -> Session``."""

RESULT_KINDS = ("tool_success", "tool_error", "tool_timeout")


def _text(content: Any) -> str:
    """A message's text, a line per block that is not text."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif isinstance(block, Mapping):
            parts.append(f"[{block.get('type')}]")
    return "".join(parts)


def to_langchain_messages(compiled: Sequence[Mapping[str, Any]]) -> Tuple[SystemMessage, List[AnyMessage]]:
    """A compiled context in the ``openai`` format as LangChain's system
    message and messages (a system message after the first turn, as the
    zones place the goal's restatement, is a human message)."""
    system: List[str] = []
    messages: List[AnyMessage] = []
    for m in compiled:
        role = m.get("role")
        if role in ("system", "developer"):
            if messages:
                messages.append(HumanMessage(_text(m.get("content"))))
            else:
                system.append(_text(m.get("content")))
        elif role == "user":
            messages.append(HumanMessage(content=m.get("content") or ""))
        elif role == "assistant":
            calls = [
                {
                    "id": c["id"],
                    "name": c["function"]["name"],
                    "args": json.loads(c["function"].get("arguments") or "{}"),
                    "type": "tool_call",
                }
                for c in m.get("tool_calls") or []
            ]
            messages.append(AIMessage(content=m.get("content") or "", tool_calls=calls))
        elif role == "tool":
            messages.append(ToolMessage(content=_text(m.get("content")), tool_call_id=m.get("tool_call_id", "")))
    return SystemMessage("\n\n".join(system)), messages


def _tool_spec(tool: Any) -> Optional[ToolSpec]:
    """A LangChain tool (or tool dict) as the spec a compile counts."""
    try:
        function = convert_to_openai_tool(tool)["function"]
    except Exception:  # noqa: BLE001 - a tool the converter does not take is counted by name
        name = getattr(tool, "name", None)
        return ToolSpec(name) if isinstance(name, str) else None
    return ToolSpec(function["name"], function.get("description", ""), function.get("parameters") or {"type": "object"})


class _Recorded:
    """What a session holds already: message ids, call ids, answered calls."""

    def __init__(self, session: Session) -> None:
        self.messages: Set[str] = set()
        self.calls: Set[str] = set()
        self.results: Set[str] = set()
        for e in session.events:
            found = e.get("data")
            data: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
            if data.get("message_id"):
                self.messages.add(data["message_id"])
            if e["kind"] == "tool_call" and data.get("call_id"):
                self.calls.add(data["call_id"])
            if e["kind"] in RESULT_KINDS and data.get("call_id"):
                self.results.add(data["call_id"])


class ContextMiddleware(AgentMiddleware):
    """Middleware for ``create_agent``: each model call compiled from the
    thread's session under ``budget``, every step recorded once, tool
    results redacted before the checkpointer sees them.

    ``session`` is a :class:`Session` or ``thread_id -> Session`` (the id
    from the run's ``configurable.thread_id``); with ``store``, the session
    is synced to it after every step. ``compile_options`` are
    :meth:`ContextCompiler.compile`'s (``system_prompt`` by default the
    agent's own). A tool that raises gives the model an error result
    (recorded as ``tool_error``), as LangChain does without a middleware.
    """

    def __init__(
        self,
        *,
        session: SessionSource,
        budget: int,
        compiler: Optional[ContextCompiler] = None,
        store: Optional[ArtifactStore] = None,
        **compile_options: Any,
    ) -> None:
        super().__init__()
        if not isinstance(session, Session) and not callable(session):
            raise ContextCompilerError("INVALID_ARGUMENT", "session must be a Session or thread_id -> Session")
        for banned in ("format", "tools"):
            if banned in compile_options:
                raise ContextCompilerError("INVALID_ARGUMENT", f"{banned} is the agent's: it is not an option here")
        self._session = session
        self._budget = budget
        self._compiler = compiler or ContextCompiler()
        self._store = store
        self._options = compile_options
        self._recorded: weakref.WeakKeyDictionary[Session, _Recorded] = weakref.WeakKeyDictionary()

    @property
    def name(self) -> str:
        """The middleware's name in the agent's graph."""
        return "AgentContextCompiler"

    # -- the session ---------------------------------------------------

    def session_of_run(self) -> Session:
        """The session of the run in progress (its ``thread_id``'s)."""
        if isinstance(self._session, Session):
            return self._session
        thread = (get_config().get("configurable") or {}).get("thread_id")
        if not isinstance(thread, str) or thread == "":
            raise ContextCompilerError(
                "INVALID_ARGUMENT",
                "ContextMiddleware: with a session function, invoke the agent with {'configurable': {'thread_id': ...}}",
            )
        return self._session(thread)

    def _seen(self, session: Session) -> _Recorded:
        found = self._recorded.get(session)
        if found is None:
            found = self._recorded[session] = _Recorded(session)
        return found

    def _sync(self, session: Session) -> None:
        if self._store is not None:
            self._store.sync(session)

    # -- recording -----------------------------------------------------

    def _record_result(self, session: Session, message: ToolMessage) -> str:
        """Records a tool result once; returns its recorded (redacted) text."""
        seen = self._seen(session)
        failed = message.status == "error"
        text = _text(message.content)
        data: Dict[str, Any] = {"tool": message.name or "unknown", "call_id": message.tool_call_id}
        data["error" if failed else "result"] = text
        if message.id:
            data["message_id"] = message.id
            seen.messages.add(message.id)
        event = session.record("tool_error" if failed else "tool_success", data)
        seen.results.add(str(message.tool_call_id))
        return str(event["data"]["error" if failed else "result"])

    def _record_ai(self, session: Session, message: AIMessage) -> None:
        seen = self._seen(session)
        if message.usage_metadata:
            session.record_usage(dict(message.usage_metadata))
        text = _text(message.content)
        message_id: Optional[str] = message.id
        if text != "" or not message.tool_calls:
            data: Dict[str, Any] = {"text": text}
            if message_id:
                data["message_id"] = message_id
            session.record("assistant_output", data)
            message_id = None
        for call in message.tool_calls:
            call_id = call.get("id")
            if not call_id:
                continue
            seen.calls.add(call_id)
            data = {"tool_name": call["name"], "arguments": call.get("args") or {}, "call_id": call_id}
            if message_id:
                data["message_id"] = message_id
                message_id = None
            session.record("tool_call", data)
        if message.id:
            seen.messages.add(message.id)

    def _record_state(self, session: Session, messages: Sequence[BaseMessage]) -> None:
        seen = self._seen(session)
        for m in messages:
            if m.id and m.id in seen.messages:
                continue
            if isinstance(m, HumanMessage):
                data: Dict[str, Any] = {"text": _text(m.content)}
                if m.id:
                    data["message_id"] = m.id
                    seen.messages.add(m.id)
                session.record("user_input", data)
            elif isinstance(m, AIMessage):
                if not m.id and _text(m.content) == "" and m.tool_calls and all(c.get("id") in seen.calls for c in m.tool_calls):
                    continue
                self._record_ai(session, m)
            elif isinstance(m, ToolMessage) and (m.id or m.tool_call_id not in seen.results):
                self._record_result(session, m)

    def _redacted(self, session: Session, message: ToolMessage) -> ToolMessage:
        """``message`` recorded, as the message to keep in its place: itself
        (under the id it was recorded by) when recording redacted nothing,
        else its redacted text, without its ``artifact`` (which may hold
        what was redacted)."""
        kept = message.model_copy(update={"id": message.id or f"acc-{uuid.uuid4()}"})
        text = self._record_result(session, kept)
        if text == _text(message.content):
            return kept
        return kept.model_copy(update={"content": text, "artifact": None})

    # -- the hooks -----------------------------------------------------

    def _compiled(self, request: ModelRequest) -> Tuple[Session, ModelRequest, Dict[str, Any]]:
        session = self.session_of_run()
        self._record_state(session, request.messages)
        options = dict(self._options)
        if "system_prompt" not in options:
            options["system_prompt"] = _text(request.system_message.content) if request.system_message else ""
        tools = [spec for spec in (_tool_spec(t) for t in request.tools) if spec is not None]
        ctx: CompiledContext = self._compiler.compile(session, self._budget, tools=tools, format="openai", **options)
        system, messages = to_langchain_messages(ctx.to_messages())
        metadata = {"tokenCount": ctx.token_count, "budget": self._budget, "ledger": ctx.ledger}
        return session, request.override(messages=messages, system_message=system), metadata

    def _recorded_reply(self, session: Session, response: Any, metadata: Dict[str, Any]) -> Any:
        replies = response.result if isinstance(response, ModelResponse) else [response]
        for message in replies:
            if isinstance(message, AIMessage):
                message.response_metadata = {**message.response_metadata, METADATA_KEY: metadata}
                if not message.id:
                    message.id = f"acc-{uuid.uuid4()}"
                self._record_ai(session, message)
        self._sync(session)
        return response

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        """Compiles the call from the thread's session; records the reply."""
        session, compiled, metadata = self._compiled(request)
        return self._recorded_reply(session, handler(compiled), metadata)

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[Any]],
    ) -> Any:
        """:meth:`wrap_model_call` for ``ainvoke``: the component's work on a thread."""
        session, compiled, metadata = await asyncio.to_thread(self._compiled, request)
        response = await handler(compiled)
        return await asyncio.to_thread(self._recorded_reply, session, response, metadata)

    def _tool_failure(self, request: ToolCallRequest, error: Exception) -> ToolMessage:
        call = request.tool_call
        return ToolMessage(
            content=f"{error}\n Please fix your mistakes.",
            tool_call_id=call.get("id") or "",
            name=call.get("name"),
            status="error",
        )

    def _kept(self, result: Any) -> Any:
        """A tool's result recorded, as what the state keeps: a message
        redacted, or a ``Command`` whose tool messages are."""
        if not isinstance(result, (ToolMessage, Command)):
            return result
        session = self.session_of_run()
        if isinstance(result, ToolMessage):
            kept: Any = self._redacted(session, result)
        else:
            kept = self._redacted_command(session, result)
        self._sync(session)
        return kept

    def _redacted_command(self, session: Session, command: Command[Any]) -> Command[Any]:
        update = command.update
        if not isinstance(update, Mapping) or "messages" not in update:
            return command
        messages = update["messages"]

        def one(message: Any) -> Any:
            return self._redacted(session, message) if isinstance(message, ToolMessage) else message

        redacted = [one(m) for m in messages] if isinstance(messages, list) else one(messages)
        return dataclasses.replace(command, update={**update, "messages": redacted})

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]) -> Any:
        """Runs the tool; records its result and returns it redacted."""
        try:
            result = handler(request)
        except GraphBubbleUp:
            raise
        except Exception as e:  # noqa: BLE001 - the model's to read, as without the middleware
            result = self._tool_failure(request, e)
        return self._kept(result)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Any]]
    ) -> Any:
        """:meth:`wrap_tool_call` for ``ainvoke``."""
        try:
            result = await handler(request)
        except GraphBubbleUp:
            raise
        except Exception as e:  # noqa: BLE001 - the model's to read
            result = self._tool_failure(request, e)
        return await asyncio.to_thread(self._kept, result)
