"""agent-context-compiler for Python: the context compiler's WebAssembly
component, hosted by wasmtime.

Sessions record an agent's events once, counted; the compiler lays them
out under a token budget it never exceeds, in the zoned layout with a
stable prefix for prompt caches, and renders the request each provider
accepts. See docs/python.md.
"""

from .bus import EventBus, HandlerFailure
from .context_window import CompactionLevel, ContextWindow, ZoneBudgets
from .compiler import (
    ArtifactAttacher,
    CompileOptions,
    CompiledContext,
    Compactor,
    ContextCompiler,
    Format,
    HistoryRecall,
    HistorySelector,
    Layout,
    Memory,
    MemoryPreloader,
    Processor,
    PromptOptions,
    ToolSpec,
    check_request,
    look_back_tool_definitions,
    recommended_processors,
    to_messages,
)
from .errors import ContextCompilerError
from .runner import ApprovalDecision, Model, RunOptions, aresume_compiled, arun_compiled, resume_compiled, run_compiled
from .session import SearchHit, Session
from .tools import SchemaRegistry, Tool, call_tool, redact
from .stores import (
    ArtifactStore,
    FileStore,
    KvStore,
    MemoryStore,
    SaveReport,
    SqliteStore,
    SyncReport,
)

__all__ = [
    "CompactionLevel",
    "ContextWindow",
    "EventBus",
    "HandlerFailure",
    "ZoneBudgets",
    "ApprovalDecision",
    "Model",
    "SchemaRegistry",
    "Tool",
    "aresume_compiled",
    "arun_compiled",
    "call_tool",
    "redact",
    "resume_compiled",
    "run_compiled",
    "ArtifactAttacher",
    "ArtifactStore",
    "CompileOptions",
    "CompiledContext",
    "Compactor",
    "ContextCompiler",
    "ContextCompilerError",
    "FileStore",
    "Format",
    "HistoryRecall",
    "HistorySelector",
    "KvStore",
    "Layout",
    "Memory",
    "MemoryPreloader",
    "MemoryStore",
    "Processor",
    "PromptOptions",
    "RunOptions",
    "SaveReport",
    "SearchHit",
    "Session",
    "SqliteStore",
    "SyncReport",
    "ToolSpec",
    "check_request",
    "look_back_tool_definitions",
    "recommended_processors",
    "to_messages",
]
