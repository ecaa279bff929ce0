"""How one run builds and reads its knowledge layer: extractor, reader, retrieval, and the model behind them.

`StudyConfig` is the whole choice (the post's --reader, --extractor, --retrieval, --api, --url, --model,
--embed-model); `open_session` turns it into objects, with a call cache seeded from earlier runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .extraction import Extractor, RegexExtractor
from .llm import EXTRACTION_PROMPTS, ModelExtractor, ModelReader, model_extractor_id, model_reader_id
from .models import CachedClient, CacheEntry, ModelClient, build_client
from .progress import Progress
from .readers import DeterministicReader, Reader
from .retrieval import Bm25Retriever, EmbeddingRetriever
from .store import StoredPage
from .world import World

EXTRACTORS = ("regex", "model")
READERS = ("deterministic", "model")
RETRIEVALS = ("bm25", "embed")


@dataclass(frozen=True)
class StudyConfig:
    extractor: str = "regex"
    reader: str = "deterministic"
    retrieval: str = "bm25"
    api: str = "ollama"
    url: str | None = None
    model: str = "qwen2.5:7b"
    embed_model: str = "nomic-embed-text"
    extraction_prompt: str = "few-shot-v1"
    timeout_seconds: float = 300.0

    def __post_init__(self) -> None:
        for name, value, allowed in (("extractor", self.extractor, EXTRACTORS), ("reader", self.reader, READERS),
                                     ("retrieval", self.retrieval, RETRIEVALS), ("api", self.api, ("ollama", "openai"))):
            if value not in allowed:
                raise ValueError(f"unknown {name} {value!r}: use one of {', '.join(allowed)}")

        if self.extraction_prompt not in EXTRACTION_PROMPTS:
            raise ValueError(f"unknown extraction prompt {self.extraction_prompt!r}: use one of {', '.join(EXTRACTION_PROMPTS)}")

    def extractor_id(self, world: World) -> str:
        """Who writes the graph: the graph assets' code version, and stored on every fact."""
        if self.extractor == "regex":
            return "regex"
        return model_extractor_id(self.model, self.extraction_prompt, world.ontology)

    def reader_id(self) -> str:
        """Who answers, and from what retrieval: the answers asset's code version."""
        reader = "deterministic" if self.reader == "deterministic" else model_reader_id(self.model)
        retrieval = "bm25" if self.retrieval == "bm25" else f"embed:{self.embed_model}"
        return f"{reader}+{retrieval}"

    @classmethod
    def from_mapping(cls, values: dict, source: str) -> "StudyConfig":
        unknown = set(values) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"{source}: unknown study settings {sorted(unknown)} (known: {sorted(cls.__dataclass_fields__)})")
        return cls(**values)

    @property
    def uses_model(self) -> bool:
        return self.extractor == "model" or self.reader == "model" or self.retrieval == "embed"


@dataclass
class Session:
    config: StudyConfig
    extractor: Extractor
    reader: Reader
    client: CachedClient | None
    progress: Progress = field(default_factory=lambda: Progress(enabled=False))

    def retriever(self, pages: list[StoredPage]):  # type: ignore[no-untyped-def]
        if self.config.retrieval == "embed":
            assert self.client is not None
            return EmbeddingRetriever(pages, self.client)
        return Bm25Retriever(pages)

    @property
    def new_cache_entries(self) -> list[CacheEntry]:
        return self.client.new_entries if self.client else []


def open_session(world: World, config: StudyConfig, cache: dict[str, CacheEntry] | None = None,
                 progress: Progress | None = None,
                 client_factory: Callable[[StudyConfig], ModelClient] | None = None) -> Session:
    """Build the run's objects. With a model in play, the server is checked first, so a server that is
    down fails the run with one line before anything is written."""
    progress = progress or Progress(enabled=False)
    client = None
    if config.uses_model:
        factory = client_factory or (lambda c: build_client(c.api, c.url, c.model, c.embed_model, c.timeout_seconds))
        inner = factory(config)
        inner.check()
        client = CachedClient(inner, dict(cache or {}), on_call=progress.on_call)
    extractor: Extractor = (ModelExtractor(world.ontology, client, config.extraction_prompt)  # type: ignore[arg-type]
                            if config.extractor == "model" else RegexExtractor(world.ontology))
    reader: Reader = ModelReader(world.ontology, client) if config.reader == "model" else DeterministicReader(world.ontology)  # type: ignore[arg-type]
    return Session(config, extractor, reader, client, progress)
