"""Two speed-ups of wasmtime-py 50's dynamic component values, installed
only for the version they were written against.

**Types read once.** wasmtime-py reads a function's types back from C on
every call, and a record's fields, a variant's cases and whether it is
tagged on every value it converts (about 190 reads a compile). Types do not
change: :func:`call` keeps each function's parameter and result types, and
the type objects keep what they read, so each is read once.

**Byte lists in bulk.** wasmtime-py 50 converts a ``list<u8>`` one element at a time in Python (a
``wasmtime_component_val_t`` per byte, about 3 µs each): a 1 MB artifact
chunk takes seconds. Each element of such a list is the same small C
struct (the kind ``u8`` and the byte), so the whole array can be written or
read with one ``memmove``: this module gives ``ListType`` that path for
byte lists, the other lists keeping wasmtime-py's own. It is installed
only for the wasmtime-py version it was written against, and only when the
struct's layout (read from its ctypes description, not assumed) is the one
it expects; ``python/tests/test_speedups.py`` checks it against the original
conversion.
"""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any, Callable

from wasmtime import _ffi as ffi
from wasmtime.component import Func
from wasmtime.component._enter import enter_wasm
from wasmtime.component._types import (
    FuncType,
    ListType,
    OptionType,
    RecordType,
    ResultType,
    ValType,
    VariantLikeType,
    VariantType,
)

__all__ = ["install", "installed", "stock_to_c", "stock_from_c", "FuncTypes", "LoweringError", "call", "wasmtime_version"]

_VERSION = "50.0.1"

stock_to_c = ListType.convert_to_c
"""wasmtime-py's own conversion to C, kept for other lists and tests."""
stock_from_c = ListType.convert_from_c
"""wasmtime-py's own conversion from C."""

_val = ffi.wasmtime_component_val_t
_SIZE = ctypes.sizeof(_val)
_KIND = _val.kind.offset
_OF = _val.of.offset
_U8 = bytes([ffi.WASMTIME_COMPONENT_U8.value])


def _layout_expected() -> bool:
    fields = dict((name, ty) for name, ty, *_ in _val._fields_)
    return (
        fields.get("kind") is ctypes.c_uint8
        and ffi.wasmtime_component_valunion.u8.offset == 0  # type: ignore[attr-defined]
        and _OF > _KIND
        and _SIZE > _OF
    )


def _to_c(self: ListType, store: Any, val: Any, ptr: Any) -> None:
    if not self._is_bytes():
        stock_to_c(self, store, val, ptr)
        return
    if not isinstance(val, (bytes, bytearray, memoryview)):
        raise TypeError("expected bytes value")
    data = bytes(val)
    raw = ffi.wasmtime_component_vallist_t()
    ffi.wasmtime_component_vallist_new_uninit(raw, len(data))
    if data:
        elements = bytearray(len(data) * _SIZE)
        elements[_KIND::_SIZE] = _U8 * len(data)
        elements[_OF::_SIZE] = data
        ctypes.memmove(raw.data, bytes(elements), len(elements))
    ptr.contents.kind = ffi.WASMTIME_COMPONENT_LIST
    ptr.contents.of.list = raw


def _from_c(self: ListType, c: Any) -> Any:
    if not self._is_bytes():
        return stock_from_c(self, c)
    try:
        n = c.of.list.size
        if n == 0:
            return b""
        return ctypes.string_at(c.of.list.data, n * _SIZE)[_OF::_SIZE]
    finally:
        ffi.wasmtime_component_vallist_delete(ctypes.byref(c.of.list))


def _memoized(cls: type, name: str) -> None:
    """``cls.name`` (a property or a method without arguments) computed once
    per object: type objects are immutable."""
    stock = getattr(cls, name)
    read: Callable[[Any], Any] = stock.fget if isinstance(stock, property) and stock.fget else stock
    slot = f"_acc_{name}"

    def once(self: Any) -> Any:
        found = self.__dict__.get(slot)
        if found is None:
            found = self.__dict__[slot] = read(self)
        return found

    setattr(cls, name, property(once) if isinstance(stock, property) else once)


class LoweringError(Exception):
    """An argument its WIT type does not take (a surrogate in a string, a
    value of the wrong kind): raised before the component is entered."""


class FuncTypes:
    """A function's parameter and result types, read once."""

    def __init__(self, func: Func, store: Any) -> None:
        fty = func.type(store)
        self.owner: FuncType = fty
        self.params: list[ValType] = [ty for _, ty in fty.params]
        self.result: Any = fty.result


def call(func: Func, types: FuncTypes, store: Any, *params: Any) -> Any:
    """``func(store, *params)`` with its types read once (wasmtime-py's
    ``Func.__call__`` reads them on every call)."""
    if len(params) != len(types.params):
        raise TypeError(f"wrong number of parameters provided: given {len(params)}, expected {len(types.params)}")
    param_capi = (ffi.wasmtime_component_val_t * len(params))()
    n = 0
    try:
        for ty, val in zip(types.params, params):
            try:
                ty.convert_to_c(store, val, ctypes.pointer(param_capi[n]))
            except (TypeError, ValueError, OverflowError) as e:  # UnicodeEncodeError is a ValueError
                raise LoweringError(f"argument {n + 1} is not what the function takes ({type(e).__name__}: {e})") from None
            n += 1
        result_space = None if types.result is None else ffi.wasmtime_component_val_t()

        def run() -> Any:
            return ffi.wasmtime_component_func_call(
                ctypes.byref(func._func),
                store._context(),
                param_capi,
                n,
                None if result_space is None else ctypes.byref(result_space),
                0 if result_space is None else 1,
            )

        enter_wasm(run)
        return None if result_space is None else types.result.convert_from_c(result_space)
    finally:
        for i in range(n):
            ffi.wasmtime_component_val_delete(ctypes.byref(param_capi[i]))


def installed() -> bool:
    """Whether byte lists go in bulk."""
    return ListType.convert_to_c is _to_c


_types_memoized = False


def wasmtime_version() -> str:
    """The installed wasmtime-py's version, from its ``.dist-info``
    directory's name (``importlib.metadata`` costs 20 ms of import)."""
    import wasmtime

    site = Path(wasmtime.__file__).resolve().parent.parent
    for entry in site.glob("wasmtime-*.dist-info"):
        return entry.name[len("wasmtime-") : -len(".dist-info")]
    return "unknown"


def install() -> bool:
    """Installs both speed-ups, when this wasmtime-py is the version and
    layout they were written for; returns whether they are."""
    global _types_memoized
    if installed():
        return True
    if wasmtime_version() != _VERSION or not _layout_expected():
        return False
    ListType.convert_to_c = _to_c  # type: ignore[method-assign]
    ListType.convert_from_c = _from_c  # type: ignore[method-assign]
    if not _types_memoized:
        for cls, name in (
            (RecordType, "fields"),
            (VariantType, "cases"),
            (VariantLikeType, "_tagged"),
            (OptionType, "payload"),
            (ResultType, "ok"),
            (ResultType, "err"),
            (ListType, "element"),
        ):
            _memoized(cls, name)
        _types_memoized = True
    return True
