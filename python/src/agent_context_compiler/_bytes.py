"""Byte lists across the component boundary in bulk.

wasmtime-py 50 converts a ``list<u8>`` one element at a time in Python (a
``wasmtime_component_val_t`` per byte, about 3 µs each): a 1 MB artifact
chunk takes seconds. Each element of such a list is the same small C
struct (the kind ``u8`` and the byte), so the whole array can be written or
read with one ``memmove``: this module gives ``ListType`` that path for
byte lists, the other lists keeping wasmtime-py's own. It is installed
only for the wasmtime-py version it was written against, and only when the
struct's layout (read from its ctypes description, not assumed) is the one
it expects; ``python/tests/test_bytes.py`` checks it against the original
conversion.
"""

from __future__ import annotations

import ctypes
from importlib import metadata
from typing import Any

from wasmtime import _ffi as ffi
from wasmtime.component._types import ListType

__all__ = ["install", "installed", "stock_to_c", "stock_from_c"]

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


def installed() -> bool:
    """Whether byte lists go in bulk."""
    return ListType.convert_to_c is _to_c


def install() -> bool:
    """Gives byte lists the bulk path, when this wasmtime-py is the version
    and layout it was written for; returns whether it is installed."""
    try:
        version = metadata.version("wasmtime")
    except metadata.PackageNotFoundError:
        return False
    if version != _VERSION or not _layout_expected():
        return False
    ListType.convert_to_c = _to_c  # type: ignore[method-assign]
    ListType.convert_from_c = _from_c  # type: ignore[method-assign]
    return True
