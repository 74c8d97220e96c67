"""A component resource held from Python: a session, a schema registry, a
bus, a window."""

from __future__ import annotations

from typing import Any, ClassVar

from wasmtime.component import ResourceAny

from ._runtime import HandleRef, Runtime

__all__ = ["Resource"]


class Resource:
    """One of the component's resources, kept by its runtime under a key
    (see :meth:`Runtime.adopt`) and released when this object goes."""

    _interface: ClassVar[str]
    """The interface that exports the resource (``sessions``, ``bus``, ...)."""
    _resource: ClassVar[str]
    """Its WIT name (``session``, ``event-bus``, ...)."""

    _rt: Runtime
    _key: int

    def _hold(self, rt: Runtime, handle: ResourceAny) -> None:
        self._rt = rt
        self._key = rt.adopt(handle)

    @property
    def _handle(self) -> HandleRef:
        """The resource as a call's argument (resolved at the call)."""
        return HandleRef(self._key)

    def _method(self, name: str, *args: Any) -> Any:
        """Calls the resource's method ``name`` with ``args``."""
        return self._rt.call(self._interface, f"[method]{self._resource}.{name}", self._handle, *args)

    def close(self) -> None:
        """Releases the resource's memory in the component (at the next
        call); later calls on it are ``INVALID_ARGUMENT``."""
        self._rt.release(self._key)

    def __del__(self) -> None:
        if getattr(self, "_key", None) is not None:
            self._rt.release(self._key)
