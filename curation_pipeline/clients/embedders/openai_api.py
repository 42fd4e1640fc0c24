"""Embeddings from OpenAI, Azure OpenAI or any OpenAI-compatible server (``CURATION_EMBEDDER=openai``).

`OpenAIEmbedder` sends each ``embed(texts)`` call as ONE ``POST /embeddings`` request (step 4
already batches texts), through the official `openai` client with the SDK's own retries off.
Retries, Retry-After, the circuit breaker and the call budget are the shared layer's
(`clients/resilience.py`, also the LLM client's), so every request is counted:

- timeouts, lost connections, 408/409/429/5xx and malformed or short bodies are retried with
  doubling backoff and jitter; a Retry-After is honoured, but one longer than
  ``max_retry_wait_secs`` is not waited for;
- other 4xx (bad key, unknown model, rejected request) are configuration errors: `EmbeddingError`
  at once, naming the variable to fix;
- a model fact that retrying cannot change (vectors of the wrong width, NaN, a zero vector) is an
  `EmbeddingError` at once too;
- `EmbedderUnavailable` (a subclass) means "the service is not answering now": retries used up,
  circuit breaker open or call budget used up. Step 4 catches it and leaves the remaining nodes
  for the next cycle, while a plain `EmbeddingError` is something a person has to fix.

One embedder object lives for one cycle: its breaker and budget are per cycle, like LLMClient's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

# openai is imported where it is used (see openai_sdk.py): a run that never embeds through it
# should not pay the import at start-up.
from curation_pipeline.clients.openai_sdk import (
    OPENAI_API,
    make_openai_client,
    short,
    status_detail,
    transient_failure,
)
from curation_pipeline.clients.resilience import (
    BreakerOpen,
    GaveUp,
    OverBudget,
    Policy,
    Resilience,
    ResilienceCounters,
    Retryable,
)
from curation_pipeline.config.embedder import EmbedderSettings
from curation_pipeline.config.environment import revealed
from curation_pipeline.core.vectors import (
    EmbedderUnavailable,
    EmbeddingError,
    validate_vectors,
)


class EmbedderUsage(ResilienceCounters):
    """Counters of one embedder object (one cycle), for step 4's report. Requests, retries,
    waits and the breaker are the resilience layer's."""

    def __init__(self, resilience: Resilience) -> None:
        super().__init__(resilience)
        self.failed_calls = 0  # `embed` calls that raised
        self.prompt_tokens = 0  # as the server reports them


class OpenAIEmbedder:
    """The `Embedder` of provider ``openai`` / ``azure`` (see the module docstring).

    ``client`` is an `openai.OpenAI`-like client; by default one is built from ``settings`` on the
    first request, so that building the embedder (step 2 only needs its ``name``) costs nothing.
    ``sleep`` is injectable so that tests need not wait.
    """

    def __init__(
        self,
        settings: EmbedderSettings,
        *,
        client: Any = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if settings.provider not in ("openai", "azure"):
            raise ValueError(f"OpenAIEmbedder needs provider openai or azure, not {settings.provider!r}")
        self.settings = settings
        self.model: str = settings.model_name or ""
        self.dimension: int = settings.dimension
        self.max_input_chars: int = settings.max_input_chars
        # The provider is part of the name: an Azure deployment may be called anything.
        self.name = f"{settings.provider}:{self.model}/{self.dimension}"
        # Only the text-embedding-3 models are documented to accept `dimensions`; older ones and
        # many compatible servers reject the parameter with a 400.
        self.send_dimensions = (
            settings.send_dimensions if settings.send_dimensions is not None
            else self.model.startswith("text-embedding-3")
        )
        self._resilience = Resilience(
            Policy.of(settings, "embedding requests this cycle; CURATION_EMBEDDER_MAX_CALLS"), sleep=sleep)
        self.usage = EmbedderUsage(self._resilience)
        self._client = client

    def __repr__(self) -> str:
        where = self.settings.base_url or OPENAI_API
        return f"OpenAIEmbedder(name={self.name!r}, base_url={where!r})"  # never the key

    # ---------------------------------------------------------------------------------------

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One request (plus retries) for all ``texts``; float32 rows in input order."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single string")
        texts = list(texts)
        for index, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"text {index} is {type(text).__name__}, expected str")
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        try:
            return self._resilience.call(lambda: self._attempt(texts))
        except BreakerOpen:
            raise EmbedderUnavailable(
                f"circuit breaker open: {self.usage.consecutive_failures} embedding calls in a row "
                "failed this cycle, so no more requests are sent until the next cycle"
            ) from None
        except OverBudget as refused:
            self.usage.failed_calls += 1
            raise EmbedderUnavailable(str(refused)) from None
        except GaveUp as failure:
            self.usage.failed_calls += 1
            raise EmbedderUnavailable(f"embeddings endpoint unavailable after {failure.attempts} "
                                      f"attempt{'s' * (failure.attempts != 1)}: {failure.last_error}") from None
        except EmbeddingError:
            self.usage.failed_calls += 1
            raise

    def _attempt(self, texts: list[str]) -> np.ndarray:
        """Send once. Returns the vectors, raises `Retryable` or (not retryable) `EmbeddingError`."""
        import openai

        limit = self.settings.max_input_chars
        request: dict[str, Any] = {"model": self.model, "input": [text[:limit] for text in texts],
                                   "encoding_format": "float"}
        if self.send_dimensions:
            request["dimensions"] = self.dimension
        client = self._get_client()  # outside the try: its EmbeddingError is a ValueError too
        try:
            response = client.embeddings.create(**request, timeout=self.settings.timeout_secs)
        except (openai.APIConnectionError, openai.APIStatusError) as error:
            if (retry := transient_failure(error, self.settings.timeout_secs, self._redact)) is not None:
                raise retry from None
            detail = status_detail(error, self._redact)
            raise EmbeddingError(f"{detail}; {self._advice(error.status_code)}") from None
        except (openai.APIResponseValidationError, json.JSONDecodeError) as error:
            # A 2xx whose body is not JSON (cut off, garbled): worth another attempt. Nothing
            # broader: a bug of ours must fail the step, not pass for an unavailable service.
            raise Retryable(f"malformed response: {type(error).__name__}: {short(str(error))}") from None
        return self._vectors(response, len(texts))

    def _vectors(self, response: Any, count: int) -> np.ndarray:
        """The response's vectors in input order, checked; see the module docstring for which
        problems are retried (a garbled list) and which are not (the model's own output)."""
        data = getattr(response, "data", None)
        if not isinstance(data, list):
            raise Retryable(f"malformed response: no list of embeddings ({type(response).__name__})")
        if len(data) != count:
            raise Retryable(f"malformed response: {len(data)} embeddings for {count} texts")
        rows: list[Any] = [None] * count
        for item in data:
            # Servers may return the items in any order; `index` says which text each is for.
            index = getattr(item, "index", None)
            if not isinstance(index, int) or not 0 <= index < count or rows[index] is not None:
                raise Retryable(f"malformed response: bad or repeated index {index!r}")
            vector = getattr(item, "embedding", None)
            if not isinstance(vector, list):  # e.g. a base64 string from a server ignoring "float"
                raise Retryable(f"malformed response: embedding {index} is not a list of numbers")
            rows[index] = vector
        for index, vector in enumerate(rows):
            if len(vector) != self.dimension:
                raise EmbeddingError(self._width_message(len(vector), index), row=index)
        try:
            # A null becomes NaN here and a number beyond float32 becomes inf (quietly: both are
            # reported, with their row, by validate_vectors below).
            with np.errstate(over="ignore", invalid="ignore"):
                vectors = np.asarray(rows, dtype=np.float32)
        except (TypeError, ValueError) as error:
            raise Retryable(f"malformed response: an embedding holds a non-number ({error})") from None
        self.usage.prompt_tokens += int(getattr(getattr(response, "usage", None), "prompt_tokens", 0) or 0)
        try:
            validate_vectors(vectors, self.dimension)
        except EmbeddingError as error:
            raise EmbeddingError(f"model {self.model!r} returned a bad vector: {error}", row=error.row) from None
        return vectors

    # ---------------------------------------------------------------------------------------

    def _get_client(self) -> Any:
        if self._client is None:
            import openai

            try:
                self._client = make_openai_client(self.settings)  # reads only fields both settings share
            except openai.OpenAIError:
                # The SDK refuses to start without a key (none given, no OPENAI_API_KEY).
                raise EmbeddingError(
                    f"CURATION_EMBEDDER={self.settings.provider} needs an API key: set "
                    "CURATION_EMBEDDER_API_KEY (or CURATION_EMBEDDER_BASE_URL for a server without keys)"
                ) from None
        return self._client

    def _redact(self, text: str) -> str:
        # Servers sometimes echo (part of) the key they refused; never pass it on to a log.
        key = revealed(self.settings.api_key)
        return text.replace(key, "***") if key else text

    def _advice(self, status: int) -> str:
        where = self.settings.base_url or OPENAI_API
        what = "deployment" if self.settings.provider == "azure" else "model"
        if status == 401:
            return "the API key was refused: check CURATION_EMBEDDER_API_KEY"
        if status == 403:
            return f"the API key may not use {what} {self.model!r}: check CURATION_EMBEDDER_API_KEY and the {what}'s access"
        if status == 404:
            extra = ", CURATION_EMBEDDER_AZURE_API_VERSION" if self.settings.provider == "azure" else ""
            return (f"no {what} {self.model!r} or no embeddings endpoint at {where}: check "
                    f"CURATION_EMBEDDING_MODEL and CURATION_EMBEDDER_BASE_URL{extra}")
        sent = f" (sent dimensions={self.dimension})" if self.send_dimensions else ""
        return (f"the server rejected the request{sent}: check CURATION_EMBEDDING_MODEL, "
                "CURATION_EMBEDDER_SEND_DIMENSIONS and that no text is empty or too long for the model")

    def _width_message(self, width: int, index: int) -> str:
        if self.send_dimensions:
            hint = (f"the model ignored dimensions={self.dimension}; set CURATION_EMBEDDING_DIM={width} "
                    "(a store with that column width) or CURATION_EMBEDDER_SEND_DIMENSIONS=false and a model of that width")
        else:
            hint = (f"set CURATION_EMBEDDING_DIM={width} (a store with that column width), or "
                    "CURATION_EMBEDDER_SEND_DIMENSIONS=true if the model accepts the dimensions parameter")
        return (f"model {self.model!r} returned {width}-dimensional vectors (row {index}) but the "
                f"store's column is vector({self.dimension}): {hint}")
