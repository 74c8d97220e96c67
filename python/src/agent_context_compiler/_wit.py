"""Values crossing the component boundary through wasmtime's dynamic API.

wasmtime-py lifts a WIT ``result`` whose two cases have different Python
types as the bare payload (no ``Variant``), and records with their WIT
(kebab-case) field names. These helpers build records, tell an error from
a success, and read records back, for every call of the runtime.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from wasmtime.component import Record, ResultType, ValType

from .errors import ContextCompilerError

__all__ = ["record", "fields", "unwrapper", "wit_error"]


def record(**fields: Any) -> Record:
    """A WIT record: each keyword (snake_case) is its kebab-case field."""
    value = Record()
    for name, field in fields.items():
        setattr(value, name.replace("_", "-"), field)
    return value


def fields(value: Any) -> dict[str, Any]:
    """A lifted record's fields, snake_case."""
    return {name.replace("-", "_"): field for name, field in vars(value).items()}


def wit_error(value: Any) -> ContextCompilerError:
    """The exception of the component's ``error`` record."""
    code = str(getattr(value, "code", "invalid-argument")).replace("-", "_").upper()
    return ContextCompilerError(code, str(getattr(value, "message", value)))


def _classes(ty: Optional[ValType]) -> set[type]:
    found: set[type] = set()
    if ty is None:
        found.add(object)
    else:
        ty.add_classes(found)
    return found


def unwrapper(result: Optional[ValType]) -> Callable[[Any], Any]:
    """How to read a function's lifted result: the success's payload, or
    the component's error raised."""
    if not isinstance(result, ResultType):
        return lambda value: value
    ok, err = result.ok, result.err
    tagged = bool(_classes(ok) & _classes(err))
    if tagged:

        def tagged_result(value: Any) -> Any:
            if value.tag == "err":
                raise wit_error(value.payload)
            return value.payload

        return tagged_result
    if ok is None:
        return _untagged_unit
    return _untagged


def _untagged_unit(value: Any) -> Any:
    if value is not None:
        raise wit_error(value)
    return None


def _untagged(value: Any) -> Any:
    # Untagged means the two cases lift to different classes; every error
    # of the component's exports is the `error` record, and an untagged
    # success is never one.
    if isinstance(value, Record) and hasattr(value, "code"):
        raise wit_error(value)
    return value
