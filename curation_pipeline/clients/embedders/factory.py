"""Build the configured embedder (``CURATION_EMBEDDER``)."""

from __future__ import annotations

from curation_pipeline.clients.embedders.base import Embedder
from curation_pipeline.clients.embedders.lexical import LexicalEmbedder
from curation_pipeline.config.embedder import EmbedderSettings


def make_embedder(settings: EmbedderSettings, *, batch_size: int = 64) -> Embedder:
    """Build the configured embedder. Providers with outside dependencies are imported only when
    chosen: the default install never imports torch, and a lexical store never loads onnxruntime."""
    if settings.provider == "onnx-minilm":
        from curation_pipeline.clients.embedders.onnx_minilm import OnnxMiniLMEmbedder

        return OnnxMiniLMEmbedder(settings.model)  # runs its own small batches (RUN_TEXTS)
    if settings.provider == "lexical":
        return LexicalEmbedder(settings.dimension)
    if settings.provider == "sentence-transformers":
        from curation_pipeline.clients.embedders.local import (
            SentenceTransformerEmbedder,
        )

        return SentenceTransformerEmbedder(settings.model_name, device=settings.device, batch_size=batch_size)
    from curation_pipeline.clients.embedders.openai_api import OpenAIEmbedder

    return OpenAIEmbedder(settings)
