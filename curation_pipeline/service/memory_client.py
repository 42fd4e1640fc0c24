"""MemoryClient: how a Python agent remembers and recalls through the store.

    from curation_pipeline.service.memory_client import MemoryClient

    with MemoryClient("acme", "support-bot") as memory:
        memory.remember("Dana prefers email over phone calls.")
        for found in memory.recall("How should I contact Dana?", k=3):
            print(found.text, found.similarity)
        memory.touch()  # an interaction that wrote nothing: the curator's idle clock still moves

`remember` embeds the text with the configured embedder (CURATION_EMBEDDER, as the curator's
step 4 does) and inserts it; `recall` embeds the question and calls the store's `recall`
function, which ranks current memory, records the accesses and moves the activity clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Self

from curation_pipeline.clients.embedders.base import Embedder
from curation_pipeline.clients.embedders.factory import make_embedder
from curation_pipeline.config.embedder import load_embedder_settings
from curation_pipeline.config.settings import Settings, load_settings
from curation_pipeline.core.partition_keys import partition_key
from curation_pipeline.store import recall as store
from curation_pipeline.store.database import ensure_database, open_connection

MAX_TEXT_CHARS = 20_000  # a memory is a note, not a document; a longer text is refused, not cut
MAX_K = 1000  # as the SQL function allows


class MemoryInputError(ValueError):
    """A text, question or argument the client refuses; nothing was written."""


class UnknownNamespaceError(MemoryInputError):
    """The namespace holds no memory and was never made (see `MemoryClient(create=...)`)."""


@dataclass(frozen=True)
class Superseded:
    id: str
    text: str | None


@dataclass(frozen=True)
class Recalled:
    id: str
    text: str
    memory_type: str
    confidence: str
    similarity: float
    score: float
    recall_count: int  # stored plus recorded accesses, this one included
    last_recalled_at: datetime | None
    created_at: datetime
    supersedes: tuple[Superseded, ...]  # the older memories this one replaced


def check_text(text: object, *, what: str = "text", limit: int = MAX_TEXT_CHARS) -> str:
    """The text, or MemoryInputError saying why it is refused (empty, only spaces, too long)."""
    if not isinstance(text, str):
        raise MemoryInputError(f"the {what} must be a string, got {type(text).__name__}")
    if not text.strip():
        raise MemoryInputError(f"the {what} is empty")
    if len(text) > limit:
        raise MemoryInputError(f"the {what} is {len(text):,} characters long; at most {limit:,}")
    if "\x00" in text:
        raise MemoryInputError(f"the {what} contains a NUL character, which the store cannot hold")
    return text


class MemoryClient:
    """One agent's connection to one tenant's namespace. `create=False` refuses a namespace that
    holds no memory and has no activity row (a typo would otherwise start a new namespace)."""

    def __init__(self, tenant_id: str, namespace: str, *, settings: Settings | None = None,
                 embedder: Embedder | None = None, create: bool = True, max_text_chars: int = MAX_TEXT_CHARS):
        partition_key(tenant_id, namespace)  # InvalidNameError for a name the curator cannot use
        self.tenant_id, self.namespace, self.max_text_chars = tenant_id, namespace, max_text_chars
        settings = settings or load_settings()
        self._embedder = embedder or make_embedder(
            load_embedder_settings().with_changes(dimension=settings.embedding_dim))
        self._conn = open_connection(ensure_database(settings), autocommit=True)
        if not create:
            try:
                self.require_namespace()
            except UnknownNamespaceError:
                self._conn.close()
                raise

    def exists(self) -> bool:
        """The namespace holds memory or has its activity row."""
        return store.namespace_known(self._conn, self.tenant_id, self.namespace)

    def make_namespace(self) -> None:
        """Make the namespace known (its activity row) without recording an interaction."""
        store.make_namespace(self._conn, self.tenant_id, self.namespace)

    def require_namespace(self) -> None:
        """UnknownNamespaceError unless the namespace exists."""
        if not self.exists():
            raise UnknownNamespaceError(
                f"unknown namespace {partition_key(self.tenant_id, self.namespace)}: it holds no memory and was"
                " never made (an operator makes it with `curation-pipeline mcp --create`, or any first write)")

    @property
    def embedder_name(self) -> str:
        return self._embedder.name

    def remember(self, text: str, *, memory_type: str = "semantic") -> str:
        """Embed and store a memory; its id. The namespace's activity clock moves (by trigger)."""
        check_text(text, limit=self.max_text_chars)
        check_text(memory_type, what="memory type", limit=200)
        [vector] = self._embedder.embed([text])
        return store.insert_memory(self._conn, self.tenant_id, self.namespace, text,
                                   embedding=vector, model=self._embedder.name, memory_type=memory_type)

    def recall(self, query: str, k: int = 5, *, memory_types: Sequence[str] | None = None,
               confidences: Sequence[str] | None = None, recency_weight: float = 0.0,
               record: bool = True) -> list[Recalled]:
        """The k current memories closest to the question (only vectors of this embedder), best
        first; each access is recorded and the namespace's activity clock moves (`record=False`:
        neither, for a look that is not an agent's)."""
        check_text(query, what="question", limit=self.max_text_chars)
        if not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise MemoryInputError(f"k must be an integer from 1 to {MAX_K}, got {k!r}")
        if not 0 <= recency_weight <= 1:
            raise MemoryInputError(f"recency_weight must be between 0 and 1, got {recency_weight!r}")
        [vector] = self._embedder.embed([query])
        rows = store.recall(self._conn, self.tenant_id, self.namespace, vector, k=k, memory_types=memory_types,
                            confidences=confidences, model=self._embedder.name, recency_weight=recency_weight,
                            record=record)
        return [Recalled(
            id=row["id"], text=row["pointer_summary"], memory_type=row["memory_type"], confidence=row["confidence"],
            similarity=float(row["similarity"]), score=float(row["score"]), recall_count=row["recall_count"],
            last_recalled_at=row["last_recalled_at"], created_at=row["created_at"],
            supersedes=tuple(Superseded(**older) for older in row["supersedes"]),
        ) for row in rows]

    def touch(self) -> None:
        """An interaction that wrote and read nothing (a session turn): the clock moves."""
        store.touch(self._conn, self.tenant_id, self.namespace)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
