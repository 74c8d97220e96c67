"""The four-zone context window (the component's ``context-window``): a
builder filled zone by zone, compiled into messages that never exceed its
size."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, Literal, Mapping, Optional, Sequence

from ._resource import Resource
from ._runtime import runtime
from ._wit import record
from .session import to_json_text

__all__ = ["ContextWindow", "ZoneBudgets", "CompactionLevel"]

CompactionLevel = Literal["none", "light", "full", "emergency"]
"""How much compaction the utilisation calls for (at 80, 90, 95%)."""


@dataclass(frozen=True)
class ZoneBudgets:
    """Each zone's share of the window (at most 1 in all)."""

    system: float = 0.12
    persistent: float = 0.08
    working: float = 0.40
    recent: float = 0.40


class ContextWindow(Resource):
    """A window of ``max_context_tokens`` in four zones (SYSTEM,
    PERSISTENT, WORKING, RECENT)."""

    _interface = "context-window"
    _resource = "window"

    def __init__(self, max_context_tokens: int, zone_budgets: Optional[ZoneBudgets] = None) -> None:
        rt = runtime()
        budgets = None
        if zone_budgets is not None:
            budgets = record(
                system=float(zone_budgets.system),
                persistent=float(zone_budgets.persistent),
                working=float(zone_budgets.working),
                recent=float(zone_budgets.recent),
            )
        self._hold(rt, rt.call("context-window", "[static]window.create", max_context_tokens, budgets))

    def set_system_prompt(self, prompt: str) -> None:
        """Sets the system prompt (SYSTEM)."""
        self._method("set-system-prompt", prompt)

    def set_user_preferences(self, preferences: Mapping[str, Any]) -> None:
        """Sets the user's preferences (SYSTEM)."""
        self._method("set-user-preferences", to_json_text(preferences, "preferences"))

    def set_policies(self, policies: Sequence[str]) -> None:
        """Sets the policies (SYSTEM)."""
        self._method("set-policies", list(policies))

    def set_tool_definitions(self, tools: Sequence[Mapping[str, Any]]) -> None:
        """Sets the tool definitions, each with a ``name`` (SYSTEM)."""
        self._method("set-tool-definitions", to_json_text(list(tools), "tools"))

    def set_goal(self, goal: str) -> None:
        """Sets the goal (PERSISTENT, restated in RECENT)."""
        self._method("set-goal", goal)

    def set_brain_digest(self, digest: Mapping[str, Any]) -> None:
        """Sets the brain state digest (PERSISTENT)."""
        self._method("set-brain-digest", to_json_text(digest, "digest"))

    def set_task_state(self, state: str) -> None:
        """Sets the task state (RECENT)."""
        self._method("set-task-state", state)

    def append_message(self, role: str, content: str, importance: Optional[float] = None) -> None:
        """Appends a message to working memory (importance 0.5 by default)."""
        self._method("append-message", role, content, None if importance is None else float(importance))

    def append_tool_result(self, tool_name: str, output: str, success: bool) -> None:
        """Appends a tool result (importance 0.8 when it failed, 0.4 otherwise)."""
        self._method("append-tool-result", tool_name, output, bool(success))

    def add_recent_message(self, role: str, content: str, importance: Optional[float] = None) -> None:
        """Adds a message to RECENT (importance 0.7 by default)."""
        self._method("add-recent-message", role, content, None if importance is None else float(importance))

    def write_scratchpad(self, note: str) -> None:
        """Writes a scratchpad note."""
        self._method("write-scratchpad", note)

    def compile(self) -> Dict[str, Any]:
        """``{messages, totalTokens, zoneUsage, compactionNeeded,
        compactionLevel, dropped}``."""
        compiled: Dict[str, Any] = json.loads(self._method("compile"))
        return compiled

    @property
    def compaction_level(self) -> CompactionLevel:
        """The compaction level of the current utilisation."""
        level: CompactionLevel = self._method("get-compaction-level")
        return level

    def compact_working_memory(self, summary: str) -> None:
        """Replaces working memory with one summary."""
        self._method("compact-working-memory", summary)

    def emergency_compact(self, summary: str) -> None:
        """Keeps only the goal, the summary and the last two recent items."""
        self._method("emergency-compact", summary)

    @property
    def stats(self) -> Dict[str, Any]:
        """Token usage and item counts per zone."""
        stats: Dict[str, Any] = json.loads(self._method("get-stats"))
        return stats
