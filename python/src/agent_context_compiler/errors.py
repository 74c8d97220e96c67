"""The one exception the package raises for what the component refuses."""

from __future__ import annotations

__all__ = ["ContextCompilerError"]


class ContextCompilerError(Exception):
    """A failure with a stable code: the npm package's ``error.code``.

    ``code`` is the same string the npm package's errors carry
    (``INVALID_BUDGET``, ``STORE_CONFLICT``, ...; the component's
    ``error-code`` in upper snake case), and ``message`` says what went
    wrong for people. ``MODULE_POISONED`` means the component trapped: the
    runtime that trapped refuses every later call, as the npm package's
    module does.
    """

    code: str
    """What went wrong, for programs."""

    message: str
    """What went wrong, for people."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
