"""What the LLM answer cache holds and how a request is keyed. Pure (the table: store/llm_cache.py).

An identical request is never paid for twice: the key is a hash of the exact request and of where
it goes, so changing any prompt wording, the schema or the server simply misses the cache.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class CachedAnswer:
    text: str
    model: str
    purpose: str
    input_tokens: int = 0
    output_tokens: int = 0


class AnswerCache(Protocol):
    def get(self, key: str) -> CachedAnswer | None: ...
    def put(self, key: str, answer: CachedAnswer) -> None: ...


def request_hash(request: Mapping[str, Any], endpoint: str) -> str:
    """sha256 over the canonical JSON of the request plus where it goes: the same model name at
    another server is another model."""
    canonical = json.dumps({"endpoint": endpoint, "request": request}, sort_keys=True,
                           ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
