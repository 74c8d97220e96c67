"""Where artifacts and saved sessions are kept: in memory, in any mapping,
in files, or in SQLite (the npm package's ``SqliteArtifactStore`` schema).

A store here describes a backend of the component's ``artifact-store``
interface and holds the host's side of it (the mapping, the connection).
The component keeps one store selected; each call that uses one selects
it first.
"""

from __future__ import annotations

import base64
import os
import sqlite3
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, List, MutableMapping, Optional, Sequence, Tuple, Union

from wasmtime.component import Record

from ._runtime import Runtime, runtime
from ._wit import fields, record
from .errors import ContextCompilerError

if TYPE_CHECKING:
    from .session import Session

__all__ = [
    "ArtifactStore",
    "KvStore",
    "MemoryStore",
    "FileStore",
    "SqliteStore",
    "SaveReport",
    "SyncReport",
    "scratch_store",
]

Json = Any


@dataclass(frozen=True)
class SaveReport:
    """What a save wrote."""

    events_written: int
    """Events written (0 when the store was up to date)."""
    rewritten: bool
    """Whether the whole log was written (a first save)."""


@dataclass(frozen=True)
class SyncReport:
    """What a sync did."""

    tries: int
    """Saves tried (1 when nobody else wrote meanwhile)."""
    merged: int
    """Events other writers saved that were placed before the session's own."""
    events_written: int
    """Events the successful save wrote."""


def _text_or_bytes(content: Union[str, bytes], what: str) -> bytes:
    if isinstance(content, str):
        return content.encode("utf-8")
    if isinstance(content, (bytes, bytearray, memoryview)):
        return bytes(content)
    raise ContextCompilerError("INVALID_ARGUMENT", f"{what} must be str or bytes (got {type(content).__name__})")


class ArtifactStore:
    """A backend of the component's artifact store (subclasses say which)."""

    _kv: Optional["_MappingKv"] = None
    _sql: Optional["_SqliteConnection"] = None

    def _backend(self) -> Tuple[Any, Record]:
        """The ``backend`` variant as wasmtime-py lowers it (its cases lift
        to different Python types, so by the payload alone: ``None`` for
        ``host-kv``, the directory for ``files``, the ``sql-options``
        record for ``sql``) and the ``backend-options``."""
        raise NotImplementedError

    def _call(self, iface: str, name: str, *args: Any, rt: Optional[Runtime] = None) -> Any:
        rt = rt or runtime()
        with rt.lock:
            rt.select(self)
            return rt.call(iface, name, *args)

    # -- saved sessions ------------------------------------------------

    def save(self, session: "Session") -> SaveReport:
        """Saves ``session`` under its id, only its new events when it was
        saved here before. ``STORE_CONFLICT`` when another writer saved it
        since (nothing written): :meth:`sync` instead."""
        report = self._call("session-store", "save", session._handle, rt=session._rt)
        return SaveReport(**fields(report))

    def load(self, session_id: str) -> Optional["Session"]:
        """The session saved under ``session_id``, or ``None``."""
        from .session import Session

        rt = runtime()
        handle = self._call("session-store", "load", session_id, rt=rt)
        return None if handle is None else Session._adopt(handle, rt)

    def sync(
        self,
        session: "Session",
        *,
        max_tries: Optional[int] = None,
        base_delay_ms: Optional[int] = None,
        max_delay_ms: Optional[int] = None,
    ) -> SyncReport:
        """Saves ``session``, merging what other writers saved meanwhile
        (their events placed before its unsaved ones); once it returns,
        each of its events is saved exactly once."""
        options = record(max_tries=max_tries, base_delay_ms=base_delay_ms, max_delay_ms=max_delay_ms)
        report = self._call("session-store", "sync", session._handle, options, rt=session._rt)
        return SyncReport(**fields(report))

    def delete_session(self, session_id: str) -> bool:
        """Deletes the saved session; ``False`` when there was none."""
        return bool(self._call("session-store", "delete-session", session_id))

    def list_sessions(self) -> List[str]:
        """The ids of every saved session, sorted."""
        return list(self._call("session-store", "list-sessions"))

    # -- artifacts -----------------------------------------------------

    def store(
        self,
        content: Union[str, bytes],
        source: str,
        *,
        mime_type: Optional[str] = None,
        session_id: Optional[str] = None,
    ) -> dict[str, Json]:
        """Stores ``content`` and returns its handle (``artifactId`` is its
        SHA-256: storing it twice stores it once)."""
        import json

        options = record(mime_type=mime_type, session_id=session_id)
        handle = self._call("artifact-store", "store-content", _text_or_bytes(content, "content"), source, options)
        result: dict[str, Json] = json.loads(handle)
        return result

    def retrieve(self, artifact_id: str) -> Optional[bytes]:
        """The content stored under ``artifact_id``, verified against it
        (``ARTIFACT_INTEGRITY`` when it no longer hashes to it), or
        ``None``."""
        # As base64 text: wasmtime-py traps on a byte list past about 2.7 MB.
        content = self._call("artifact-store", "retrieve-base64", artifact_id)
        return None if content is None else base64.b64decode(content)

    def attach_media(
        self,
        data: bytes,
        *,
        media_type: Optional[str] = None,
        filename: Optional[str] = None,
        detail: Optional[str] = None,
        source: Optional[str] = None,
        session_id: Optional[str] = None,
    ) -> dict[str, Json]:
        """Stores an image (PNG, JPEG, GIF, WebP) or a PDF and returns the
        media part to record: ``session.record("user_input", {"text": ...,
        "media": [part]})``."""
        import json

        options = record(
            media_type=media_type, filename=filename, detail=detail, source=source, session_id=session_id
        )
        part: dict[str, Json] = json.loads(
            self._call("artifact-store", "attach-media", _text_or_bytes(data, "data"), options)
        )
        return part


class _MappingKv:
    """A mapping seen as the component's ``artifact-kv``."""

    def __init__(self, mapping: MutableMapping[str, bytes], lock: Any) -> None:
        self.mapping = mapping
        self.lock = lock

    def get(self, key: str) -> Optional[bytes]:
        try:
            value = self.mapping[key]
        except KeyError:
            return None
        return bytes(value)

    def put(self, key: str, value: bytes) -> None:
        self.mapping[key] = value

    def delete(self, key: str) -> None:
        self.mapping.pop(key, None)

    def list_keys(self, prefix: str) -> List[str]:
        return [k for k in list(self.mapping.keys()) if k.startswith(prefix)]

    def put_if(self, key: str, value: bytes, expected: Optional[bytes]) -> bool:
        own = getattr(self.mapping, "put_if", None)
        if callable(own):
            return bool(own(key, value, expected))
        with self.lock:
            if self.get(key) != expected:
                return False
            self.mapping[key] = value
            return True


MAX_KV_CHUNK_BYTES = 1 << 20
"""The largest ``chunk_bytes`` of a :class:`KvStore` (each value crosses
the component boundary as a byte list)."""


class KvStore(ArtifactStore):
    """Artifacts and sessions in a mapping of ``str`` keys to ``bytes``
    (a ``dict``, ``shelve``, or a client's mapping), laid out as the npm
    package's ``KvArtifactStore`` lays them out.

    Saving moves a session's head by compare-and-set: the mapping's own
    ``put_if(key, value, expected)`` when it has one (give one to a mapping
    other processes write), else a comparison and a write under ``lock``
    (by default one lock per store), atomic among this process's writers.
    """

    def __init__(
        self,
        mapping: Optional[MutableMapping[str, bytes]] = None,
        *,
        chunk_bytes: Optional[int] = None,
        prefix: Optional[str] = None,
        lock: Any = None,
    ) -> None:
        if chunk_bytes is not None and chunk_bytes > MAX_KV_CHUNK_BYTES:
            raise ContextCompilerError(
                "INVALID_ARGUMENT",
                f"chunk_bytes is at most {MAX_KV_CHUNK_BYTES} here: wasmtime-py copies each value the "
                "component writes byte by byte, and traps past about 2.7 MB",
            )
        self.mapping: MutableMapping[str, bytes] = {} if mapping is None else mapping
        self._kv = _MappingKv(self.mapping, lock if lock is not None else threading.Lock())
        self._options = record(chunk_bytes=chunk_bytes, prefix=prefix)

    def _backend(self) -> Tuple[Any, Record]:
        return None, self._options


class MemoryStore(KvStore):
    """Artifacts and sessions in this process's memory (a ``dict``)."""

    def __init__(self, *, chunk_bytes: Optional[int] = None) -> None:
        super().__init__({}, chunk_bytes=chunk_bytes)


_scratch: Optional["MemoryStore"] = None


def scratch_store() -> "MemoryStore":
    """The empty store a call that names none selects, so that it never
    reads or writes a store another call named."""
    global _scratch
    if _scratch is None:
        _scratch = MemoryStore()
    return _scratch


class FileStore(ArtifactStore):
    """Artifacts and sessions in files under ``directory`` (created when
    missing), by the component's own files backend, laid out as the npm
    package's ``FsArtifactStore`` lays them out: the two read and write one
    directory."""

    def __init__(
        self,
        directory: Union[str, "os.PathLike[str]"],
        *,
        chunk_bytes: Optional[int] = None,
        prefix: Optional[str] = None,
    ) -> None:
        self.directory = os.path.abspath(os.fspath(directory))
        self._options = record(chunk_bytes=chunk_bytes, prefix=prefix)

    def _backend(self) -> Tuple[Any, Record]:
        return self.directory, self._options


class _SqliteConnection:
    """A ``sqlite3`` connection seen as the component's ``sql`` import."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        self.lock = threading.Lock()

    def query(self, sql: str, params: Sequence[Any]) -> List[List[Any]]:
        with self.lock:
            cursor = self.connection.cursor()
            cursor.row_factory = None  # rows as tuples, whatever the connection's factory
            return [list(row) for row in cursor.execute(sql, list(params)).fetchall()]

    def batch(self, statements: Iterable[Tuple[str, Sequence[Any]]]) -> None:
        with self.lock:
            conn = self.connection
            # Inside a transaction of the caller's, a savepoint: the
            # statements are one unit, committed with the caller's.
            own = not conn.in_transaction
            conn.execute("BEGIN IMMEDIATE" if own else "SAVEPOINT acc_batch")
            try:
                for sql, params in statements:
                    conn.execute(sql, list(params))
            except BaseException:
                if own:
                    conn.execute("ROLLBACK")
                else:
                    conn.execute("ROLLBACK TO acc_batch")
                    conn.execute("RELEASE acc_batch")
                raise
            conn.execute("COMMIT" if own else "RELEASE acc_batch")


class SqliteStore(ArtifactStore):
    """Artifacts and sessions in SQLite, in the npm package's
    ``SqliteArtifactStore`` schema (version 3): the component writes the
    SQL through its ``sql`` import, run here on ``connection`` (a
    ``sqlite3.Connection``, or a path to open with a 30 s busy timeout; a
    connection of your own used from several threads, as the LangChain
    middleware's async path does, is opened with ``check_same_thread=False``).
    Each write is one transaction; the npm package and other processes
    can share the file as writers."""

    def __init__(self, connection: Union[sqlite3.Connection, str, "os.PathLike[str]"]) -> None:
        if not isinstance(connection, sqlite3.Connection):
            connection = sqlite3.connect(
                os.fspath(connection), timeout=30, isolation_level=None, check_same_thread=False
            )
        elif connection.text_factory is not str:
            raise ContextCompilerError(
                "INVALID_ARGUMENT",
                "SqliteStore reads text columns as str: give it a connection whose text_factory is str",
            )
        self.connection = connection
        self._sql = _SqliteConnection(connection)

    def _backend(self) -> Tuple[Any, Record]:
        # wasmtime-py copies a byte list value by value and traps past about
        # 2.7 MB: blobs come as base64 text, so artifacts of any size fit.
        return record(dialect="sqlite", blobs_as_base64=True), record(chunk_bytes=None, prefix=None)
