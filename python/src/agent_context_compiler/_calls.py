"""Running the host's Python callables for the component's imports.

The imports are synchronous. A callable that returns an awaitable (an
``async def``) is awaited on a private event-loop thread this package owns;
one with a deadline runs on a thread of its own, and the component stops
waiting for it at the deadline (the thread is left to finish: Python cannot
stop a function from outside).
"""

from __future__ import annotations

import contextvars
import inspect
import threading
import time
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Optional

if TYPE_CHECKING:
    import asyncio

__all__ = ["call", "DeadlineExceeded", "in_callable_thread"]

_local = threading.local()


def in_callable_thread() -> bool:
    """Whether this thread runs a callable the component waits for."""
    return bool(getattr(_local, "callable", False))


class DeadlineExceeded(Exception):
    """The callable did not finish within its deadline."""


_loop: Optional["asyncio.AbstractEventLoop"] = None
_loop_lock = threading.Lock()


def _private_loop() -> "asyncio.AbstractEventLoop":
    """The package's event loop, on a daemon thread started at first use
    (asyncio imported then: it is 20 ms of a cold start)."""
    import asyncio

    global _loop
    with _loop_lock:
        if _loop is None:
            loop = asyncio.new_event_loop()

            def serve() -> None:
                _local.callable = True
                loop.run_forever()

            thread = threading.Thread(target=serve, name="agent-context-compiler-loop", daemon=True)
            thread.start()
            _loop = loop
        return _loop


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def _settle(future: "Future[Any]", timeout_s: Optional[float]) -> Any:
    try:
        return future.result(timeout=timeout_s)
    except FutureTimeout:
        future.cancel()
        raise DeadlineExceeded() from None


def call(fn: Callable[..., Any], *args: Any, timeout_ms: Optional[int] = None) -> Any:
    """``fn(*args)``, awaited when it returns an awaitable; with
    ``timeout_ms``, given up after that long (``DeadlineExceeded``)."""
    timeout_s = None if timeout_ms is None else timeout_ms / 1000
    if inspect.iscoroutinefunction(fn):
        import asyncio

        coro = fn(*args)
        return _settle(asyncio.run_coroutine_threadsafe(coro, _private_loop()), timeout_s)
    started = time.monotonic()
    if timeout_s is None:
        result = fn(*args)
    else:
        future: "Future[Any]" = Future()
        context = contextvars.copy_context()

        def run() -> None:
            # A future given up on (cancelled) takes no result.
            if not future.set_running_or_notify_cancel():
                return
            _local.callable = True
            try:
                result = context.run(fn, *args)
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                future.set_exception(e)
                return
            future.set_result(result)

        threading.Thread(target=run, name="agent-context-compiler-call", daemon=True).start()
        result = _settle(future, timeout_s)
    if inspect.isawaitable(result):
        # What is left of the deadline, not a second one.
        if timeout_s is not None:
            timeout_s = max(0.0, timeout_s - (time.monotonic() - started))
        import asyncio

        return _settle(asyncio.run_coroutine_threadsafe(_awaited(result), _private_loop()), timeout_s)
    return result
