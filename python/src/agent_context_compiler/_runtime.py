"""The component, instantiated once per process in a wasmtime store, and
the host's side of its imports.

Every call into the component goes through :meth:`Runtime.call`, under the
runtime's lock (a wasmtime store is used by one thread at a time). What a
call's imports reach (the selected store's mapping or database, the run's
tools and model, the compile's embedder and text model) is the runtime's
:class:`CallContext`, set for the call by the package's classes.

A host function never raises into the component: wasmtime poisons an
instance an exception crossed. Failures are returned as the import's
error, or, where wasmtime-py 50 cannot lower an error (a ``result`` whose
success is an ``option``), kept in the context and raised after the call.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
import threading
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Tuple

from wasmtime import Engine, Store, WasiConfig, WasmtimeError
from wasmtime.component import Component, Func, Linker, ResourceAny, Variant

from . import _calls, _speedups
from ._wit import unwrapper
from .errors import ContextCompilerError

if TYPE_CHECKING:
    from .stores import ArtifactStore

__all__ = ["Runtime", "CallContext", "HandleRef", "runtime", "WIT_PACKAGE"]

WIT_PACKAGE = "agent:context-compiler@0.6.0"
"""The WIT package the bundled component implements."""

_COMPONENT_FILE = "context_compiler_runner.wasm"


def _iface(name: str) -> str:
    return f"agent:context-compiler/{name}@0.6.0"


@dataclass(frozen=True)
class HandleRef:
    """A resource the runtime keeps (:meth:`Runtime.adopt`), named by its
    key: an argument resolved to the handle under the runtime's lock, at
    the call, so that a ``close`` on another thread cannot drop the handle
    between reading it and using it."""

    key: int


@dataclass
class CallContext:
    """What the component's imports reach during one call."""

    store: Optional["ArtifactStore"] = None
    tools: Mapping[str, Any] = field(default_factory=dict)
    model: Optional[Callable[..., Any]] = None
    model_timeout_ms: Optional[int] = None
    """How long a model call may take (none: as long as it takes)."""
    guard: Optional[Callable[..., Any]] = None
    approval: Optional[Callable[..., Any]] = None
    embedder: Optional[Callable[..., Any]] = None
    llm: Optional[Callable[..., Any]] = None
    bus_handlers: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    failure: Optional[BaseException] = None
    """A store read that failed, which the import could not return; raised
    after the call as ``STORE_FAILED``."""
    interrupt: Optional[BaseException] = None
    """What escaped an import's own handling (a ``KeyboardInterrupt``, a
    bug); raised as it is after the call."""


def _cache_dir() -> Optional[Path]:
    """Where compiled components are kept: ``$AGENT_CONTEXT_COMPILER_CACHE``
    (``off`` for nowhere), else the user's cache directory."""
    chosen = os.environ.get("AGENT_CONTEXT_COMPILER_CACHE")
    if chosen == "off":
        return None
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "agent-context-compiler"


def _wasm_bytes() -> bytes:
    return resources.files(__package__).joinpath(_COMPONENT_FILE).read_bytes()


def _wasm_digest() -> str:
    """The component's SHA-256: written beside it when the wheel is built
    (reading and hashing 5 MB is 15 ms of a cold start), else computed."""
    written = resources.files(__package__).joinpath(_COMPONENT_FILE + ".sha256")
    try:
        digest = written.read_text().split()[0]
        if len(digest) == 64:
            return digest
    except (OSError, IndexError):
        pass
    return hashlib.sha256(_wasm_bytes()).hexdigest()


def load_component(engine: Engine) -> Tuple[Component, str]:
    """The bundled component compiled for ``engine``, and how: ``cache``
    (deserialised from the cache), ``compiled`` (and cached) or
    ``compiled-uncached``.

    Compiling takes seconds; deserialising what an earlier process
    compiled takes milliseconds. The cache is keyed by the component's
    SHA-256 and wasmtime's version; a file that does not deserialise is
    compiled again and replaced. The cache is trusted like the package's
    own files (a compiled component is machine code): keep it in a
    directory only you can write.
    """
    cache = _cache_dir()
    if cache is None:
        return Component(engine, _wasm_bytes()), "compiled-uncached"
    digest = _wasm_digest()[:32]
    path = cache / f"runner-{digest}-wasmtime-{_speedups.wasmtime_version()}.cwasm"
    if path.is_file():
        try:
            return Component.deserialize_file(engine, str(path)), "cache"
        except WasmtimeError:
            pass
    component = Component(engine, _wasm_bytes())
    try:
        cache.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache, suffix=".tmp")
        with os.fdopen(fd, "wb") as out:
            out.write(component.serialize())
        os.replace(tmp, path)
    except OSError:
        return component, "compiled-uncached"
    return component, "compiled"


class Runtime:
    """One instance of the component, with its store and lock."""

    def __init__(self, engine: Optional[Engine] = None) -> None:
        self._fast = _speedups.install()
        self.engine = engine or Engine()
        self.component, self.loaded_from = load_component(self.engine)
        linker = Linker(self.engine)
        linker.add_wasip2()
        self._define_imports(linker)
        self.store = Store(self.engine)
        wasi = WasiConfig()
        # The component is this package's own code, run with the process's
        # rights: files stores name host paths, seen at the same path.
        wasi.preopen_dir("/", "/")
        self.store.set_wasi(wasi)
        self.instance = linker.instantiate(self.store, self.component)
        self.lock = threading.RLock()
        self.context = CallContext()
        self.selected: Optional["ArtifactStore"] = None
        self._funcs: Dict[Tuple[str, str], Tuple[Func, _speedups.FuncTypes, Callable[[Any], Any]]] = {}
        self._handles: Dict[int, ResourceAny] = {}
        self._next_key = 0
        self._dropped: List[ResourceAny] = []
        self._poisoned: Optional[str] = None
        self._depth = 0

    # -- calls ---------------------------------------------------------

    def _func(self, iface: str, name: str) -> Tuple[Func, _speedups.FuncTypes, Callable[[Any], Any]]:
        key = (iface, name)
        found = self._funcs.get(key)
        if found is None:
            index = self.instance.get_export_index(self.store, _iface(iface))
            fi = self.instance.get_export_index(self.store, name, index)
            func = self.instance.get_func(self.store, fi) if fi is not None else None
            if func is None:
                raise ContextCompilerError("INVALID_ARGUMENT", f"the component exports no {iface}.{name}")
            types = _speedups.FuncTypes(func, self.store)
            found = (func, types, unwrapper(types.result))
            self._funcs[key] = found
        return found

    def call(self, iface: str, name: str, *args: Any) -> Any:
        """Calls the export ``iface.name`` with ``args``: its success's
        payload, or its error raised as :class:`ContextCompilerError`.
        Calls may nest (a bus handler recording into a session); a
        callable running on a thread of the package's own (one with a
        deadline) may not call."""
        if _calls.in_callable_thread():
            raise ContextCompilerError(
                "INVALID_ARGUMENT",
                "a callable with a deadline runs on a thread of its own while the component waits for it: "
                "it cannot call the package",
            )
        with self.lock:
            if self._poisoned is not None:
                raise ContextCompilerError(
                    "MODULE_POISONED", f"the component trapped earlier ({self._poisoned}); restart the process"
                )
            func, types, unwrap = self._func(iface, name)
            args = tuple(self.handle(a.key) if isinstance(a, HandleRef) else a for a in args)
            context = self.context
            outer = (context.failure, context.interrupt)
            context.failure = context.interrupt = None
            self._depth += 1
            try:
                try:
                    if self._fast:
                        value = _speedups.call(func, types, self.store, *args)
                    else:
                        value = func(self.store, *args)
                    func.post_return(self.store)
                except _speedups.LoweringError as e:
                    raise ContextCompilerError("INVALID_ARGUMENT", f"{iface}.{name}: {e}") from None
                except WasmtimeError as e:
                    self._poisoned = str(e).splitlines()[0]
                    raise ContextCompilerError("MODULE_POISONED", f"the component trapped: {self._poisoned}") from e
                failure, interrupt = context.failure, context.interrupt
            finally:
                context.failure, context.interrupt = outer
                self._depth -= 1
                if self._depth == 0:
                    self._drop_released()
            if interrupt is not None:
                raise interrupt
            if failure is not None:
                raise ContextCompilerError("STORE_FAILED", _clean(f"the store failed: {failure}")) from failure
            return unwrap(value)

    def with_context(self, context: CallContext, fn: Callable[[], Any]) -> Any:
        """``fn()`` with ``context`` as what the imports reach."""
        with self.lock:
            before, self.context = self.context, context
            try:
                return fn()
            finally:
                self.context = before

    def select(self, store: "ArtifactStore") -> None:
        """Makes ``store`` the component's selected store (when it is not)."""
        with self.lock:
            if self.selected is store:
                return
            backend, options = store._backend()
            self.call("artifact-store", "select", backend, options)
            self.selected = store

    def adopt(self, resource: ResourceAny) -> int:
        """Keeps ``resource`` (a session, a registry) until released; the
        key names it. The runtime holds every live handle, so that a
        garbage cycle holding its owner never finalises the handle before
        the component has dropped it."""
        with self.lock:
            self._next_key += 1
            self._handles[self._next_key] = resource
            return self._next_key

    def handle(self, key: int) -> ResourceAny:
        """The resource adopted under ``key``."""
        found = self._handles.get(key)
        if found is None:
            raise ContextCompilerError("INVALID_ARGUMENT", "the session (or registry) was closed")
        return found

    def release(self, key: int) -> None:
        """Drops the resource under ``key`` once no call is running (safe
        from a finaliser or another thread, which may run in the middle of
        a call that holds it)."""
        resource = self._handles.pop(key, None)
        if resource is not None:
            self._dropped.append(resource)

    def _drop_released(self) -> None:
        while self._dropped:
            resource = self._dropped.pop()
            try:
                resource.drop(self.store)
            except WasmtimeError:
                pass

    # -- imports -------------------------------------------------------

    def _define_imports(self, linker: Linker) -> None:
        # Each import with what it answers when the host fails past its own
        # handling (a KeyboardInterrupt, a bug): a value its WIT type lowers.
        error = _clean
        imports: Dict[str, Dict[str, Tuple[Callable[..., Any], Callable[[str], Any]]]] = {
            "artifact-kv": {
                "get": (self._kv_get, lambda m: None),
                "put": (self._kv_put, error),
                "delete": (self._kv_delete, error),
                "list-keys": (self._kv_list, lambda m: None),
                "put-if": (self._kv_put_if, error),
            },
            "sql": {"query": (self._sql_query, error), "batch": (self._sql_batch, error)},
            "tool-bridge": {"call-tool": (self._call_tool, lambda m: Variant("failed", _clean(m)))},
            "bus-host": {"handle": (self._bus_handle, error)},
            "embedder": {"embed": (self._embed, error)},
            "llm": {"complete": (self._complete, lambda m: Variant("err", _clean(m)))},
            "model": {"respond": (self._respond, lambda m: Variant("err", _clean(m)))},
            "guard": {"evaluate": (self._evaluate, lambda m: Variant("err", _clean(m)))},
            "approval": {"needs-approval": (self._needs_approval, error)},
        }
        with linker.root() as root:
            for iface, funcs in imports.items():
                with root.add_instance(_iface(iface)) as instance:
                    for name, (fn, fallback) in funcs.items():
                        instance.add_func(name, self._guarded(fn, fallback))

    def _guarded(self, fn: Callable[..., Any], fallback: Callable[[str], Any]) -> Callable[..., Any]:
        """``fn`` as an import that never raises: wasmtime poisons an
        instance a Python exception crosses. What escapes ``fn``'s own
        handling (a ``KeyboardInterrupt``, a bug) is kept and raised after
        the call, every later import of the call answering its error, so
        that the component unwinds at once."""

        def host(store: Any, *args: Any) -> Any:
            if self.context.interrupt is not None:
                return fallback("the host's call was interrupted")
            try:
                return fn(store, *args)
            except BaseException as e:  # noqa: BLE001 - raised after the call
                self.context.interrupt = e
                return fallback(f"the host's call was interrupted ({type(e).__name__})")

        return host

    def _backend(self, attribute: str, what: str) -> Any:
        """The host's side of the selected store: its mapping (``_kv``) or
        its database (``_sql``)."""
        store = self.context.store or self.selected
        backend = getattr(store, attribute, None)
        if backend is None:
            raise RuntimeError(f"the selected store has no {what}")
        return backend

    def _kv(self) -> Any:
        return self._backend("_kv", "mapping")

    def _sql(self) -> Any:
        return self._backend("_sql", "database")

    def _held(self, fn: Callable[[], Any]) -> Any:
        """``fn()``; its exception kept for after the call, and ``None``."""
        if self.context.failure is not None:
            return None
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 - raised after the call
            self.context.failure = e
            return None

    def _unit(self, fn: Callable[[], Any], *, store: bool = False) -> Any:
        """``fn()`` for a ``result<_, string>`` / ``result<T, string>``
        import whose cases lift to different types: its value, or its
        exception's message as the error. A ``store`` operation after a
        store read failed (:meth:`_held`) fails too, so that nothing is
        written on what that read could not see."""
        if store and self.context.failure is not None:
            return _clean(f"an earlier store read failed: {self.context.failure}")
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 - returned as the error
            return _described(e)

    def _kv_get(self, _store: Any, key: str) -> Any:
        return self._held(lambda: self._kv().get(key))

    def _kv_put(self, _store: Any, key: str, value: bytes) -> Any:
        return self._unit(lambda: self._kv().put(key, bytes(value)), store=True)

    def _kv_delete(self, _store: Any, key: str) -> Any:
        return self._unit(lambda: self._kv().delete(key), store=True)

    def _kv_list(self, _store: Any, prefix: str) -> Any:
        return self._held(lambda: [_clean(str(k)) for k in self._kv().list_keys(prefix)])

    def _kv_put_if(self, _store: Any, key: str, value: bytes, expected: Optional[bytes]) -> Any:
        return self._unit(
            lambda: bool(self._kv().put_if(key, bytes(value), None if expected is None else bytes(expected))),
            store=True,
        )

    def _sql_query(self, _store: Any, text: str, params: List[Variant]) -> Any:
        def run() -> Any:
            rows = self._sql().query(text, [_from_sql_value(p) for p in params])
            return [[_to_sql_value(v) for v in row] for row in rows]

        return self._unit(run, store=True)

    def _sql_batch(self, _store: Any, statements: List[Any]) -> Any:
        return self._unit(
            lambda: self._sql().batch([(s.sql, [_from_sql_value(p) for p in s.params]) for s in statements]),
            store=True,
        )

    def _call_tool(self, _store: Any, name: str, arguments_json: str, timeout_ms: int) -> Any:
        tool = self.context.tools.get(name)
        if tool is None:
            return Variant("failed", _clean(f"no tool named {name!r}"))
        try:
            output = _calls.call(tool.fn, json.loads(arguments_json), timeout_ms=timeout_ms)
        except _calls.DeadlineExceeded:
            return Variant("timeout", _clean(f"{name} did not finish within {timeout_ms} ms"))
        except Exception as e:  # noqa: BLE001 - the tool's failure, recorded
            return Variant("failed", _described(e))
        try:
            return _clean(output if isinstance(output, str) else json.dumps(output, allow_nan=False))
        except Exception as e:  # noqa: BLE001 - not JSON (bytes, NaN, too deep)
            return Variant("failed", _clean(f"{name} returned what is not text or JSON ({type(e).__name__}: {e})"))

    def _bus_handle(self, _store: Any, handler: str, event_json: str) -> Any:
        fn = self.context.bus_handlers.get(handler)
        if fn is None:
            return _clean(f"no handler named {handler!r}")
        return self._unit(lambda: (_calls.call(fn, json.loads(event_json)), None)[1])

    def _embed(self, _store: Any, texts: List[str], role: str, timeout_ms: int) -> Any:
        fn = self.context.embedder
        if fn is None:
            return "no embedder"
        try:
            vectors = _calls.call(fn, list(texts), str(role), timeout_ms=timeout_ms)
            return [[float(x) for x in v] for v in vectors]
        except _calls.DeadlineExceeded:
            return f"the embedder did not finish within {timeout_ms} ms"
        except Exception as e:  # noqa: BLE001 - the error: recall goes lexical
            return _described(e)

    @staticmethod
    def _text(what: str, as_json: bool, fn: Optional[Callable[..., Any]], *args: Any) -> Any:
        """A ``result<string, string>`` import (tagged): ``fn(*args)`` as
        JSON text (``as_json``) or as text, or the failure's message."""
        if fn is None:
            return Variant("err", f"no {what}")
        try:
            out = _calls.call(fn, *args)
            if as_json:
                out = json.dumps(out, allow_nan=False)
            elif not isinstance(out, str):
                return Variant("err", f"the {what} returned {type(out).__name__}, not text")
        except Exception as e:  # noqa: BLE001 - returned as the error
            return Variant("err", _described(e))
        return Variant("ok", _clean(out))

    def _complete(self, _store: Any, prompt: str, max_tokens: int) -> Any:
        return self._text("text model", False, self.context.llm, prompt, max_tokens)

    def _respond(self, _store: Any, request_json: str, step: int) -> Any:
        model, timeout_ms = self.context.model, self.context.model_timeout_ms
        if model is None or timeout_ms is None:
            return self._text("model", True, model, json.loads(request_json), step)

        def answer(request: Any, step: int) -> Any:
            try:
                return _calls.call(model, request, step, timeout_ms=timeout_ms)
            except _calls.DeadlineExceeded:
                raise TimeoutError(f"the model did not answer within {timeout_ms} ms") from None

        return self._text("model", True, answer, json.loads(request_json), step)

    def _evaluate(self, _store: Any, text: str) -> Any:
        return self._text("guard", True, self.context.guard, text)

    def _needs_approval(self, _store: Any, call_json: str) -> Any:
        fn = self.context.approval
        if fn is None:
            return False
        return self._unit(lambda: bool(_calls.call(fn, json.loads(call_json))))


def _clean(text: str) -> str:
    """``text`` as the component takes a string: a lone surrogate (what
    ``os.fsdecode`` makes of a name that is not UTF-8) becomes U+FFFD, as
    wasmtime-py would raise on it, poisoning the instance."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _described(e: BaseException) -> str:
    """An exception as an import's error text."""
    try:
        return _clean(f"{type(e).__name__}: {e}")
    except Exception:  # noqa: BLE001 - a __str__ that raises
        return type(e).__name__


def _from_sql_value(value: Variant) -> Any:
    """A ``sql-value`` as ``sqlite3`` binds it (base64 sent as bytes)."""
    payload: Any = value.payload
    if value.tag == "base64":
        return base64.b64decode(payload)
    if value.tag == "blob":
        return bytes(payload)
    return payload


def _to_sql_value(value: Any) -> Variant:
    """A column value as a ``sql-value``."""
    if value is None:
        return Variant("null")
    if isinstance(value, (bool, int)):
        return Variant("integer", int(value))
    if isinstance(value, float):
        return Variant("real", value)
    if isinstance(value, str):
        return Variant("text", value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        # As text: a byte list past about 2.7 MB traps in wasmtime-py.
        return Variant("base64", base64.b64encode(bytes(value)).decode("ascii"))
    raise TypeError(f"a column value must be None, int, float, str or bytes (got {type(value).__name__})")


_default: Optional[Runtime] = None
_default_lock = threading.Lock()


def runtime() -> Runtime:
    """The process's runtime, created at first use."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Runtime()
        return _default
