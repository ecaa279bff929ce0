"""How one run builds and reads its knowledge layer: extractor, reader, retrieval, and the model behind them.

`StudySettings` (settings.py) is the whole choice; `open_session` turns it into objects,
with a call cache seeded from earlier runs. The extractor id and the reader id computed here are what the
Dagster assets carry as code versions and what every fact and answer row stores, so lineage names exactly
what ran.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from .call_cache import CachedClient, CacheEntry
from .clients import ModelClient
from .designs import ANSWER_RULES_VERSION, pages_when_silent
from .extraction import Extractor, RegexExtractor
from .model_extractor import ModelExtractor
from .model_reader import ModelReader
from .progress import Progress
from .prompts import model_extractor_id, model_reader_id
from .readers import DeterministicReader, Reader
from .retrieval import Bm25Retriever, EmbeddingRetriever
from .settings import StudySettings
from .store import StoredPage
from .world import World


def extractor_id(settings: StudySettings, world: World) -> str:
    """Who writes the graph: kind, model, prompt version and prompt hash."""
    if settings.extractor == "regex":
        return "regex"
    return model_extractor_id(settings.model, settings.prompt, world.ontology, world.text)


def graph_reader_id(settings: StudySettings) -> str:
    """Who answers from the graph alone, the maintenance costs' and the repair's graph-only accuracy: the
    reader, without the retrieval or the Governed setting, which that accuracy never uses."""
    return ("deterministic" if settings.reader == "deterministic"
            else model_reader_id(settings.model, settings.reader_prompt))


def when_silent(settings: StudySettings, world: World) -> str:
    """What Governed answers in this world where its graph holds nothing: "abstain" or "pages" (the setting's
    "auto" decided by the world, `designs.pages_when_silent`)."""
    return "pages" if pages_when_silent(settings.governed_when_silent, world.ontology) else "abstain"


def reader_id(settings: StudySettings, world: World) -> str:
    """Who answers, from what retrieval, and by which version of the designs' rules."""
    reader = graph_reader_id(settings)
    retrieval = "bm25" if settings.retrieval == "bm25" else f"embed:{settings.embed_model}"
    policy = when_silent(settings, world)
    silent = "" if policy == "abstain" else f"+governed-silent:{policy}"
    return f"{reader}+{retrieval}{silent}+rules:{ANSWER_RULES_VERSION}"


@dataclass
class Session:
    settings: StudySettings
    extractor: Extractor
    reader: Reader
    client: CachedClient | None
    progress: Progress = field(default_factory=lambda: Progress(enabled=False))

    def retriever(self, pages: list[StoredPage]) -> Bm25Retriever | EmbeddingRetriever:
        if self.settings.retrieval == "embed":
            assert self.client is not None
            return EmbeddingRetriever(pages, self.client)
        return Bm25Retriever(pages)

    @property
    def new_cache_entries(self) -> list[CacheEntry]:
        return self.client.new_entries if self.client else []

    @property
    def new_failures(self) -> dict[str, tuple[str, str]]:
        """Calls whose reply came back unusable in this session (key -> (model, reason))."""
        return self.client.new_failures if self.client else {}


def open_session(world: World, settings: StudySettings, client: ModelClient | None = None,
                 cache: dict[str, CacheEntry] | None = None, progress: Progress | None = None,
                 known_invalid: set[str] | None = None) -> Session:
    """Build the run's objects. With a model in play, the server is checked first, so a server that is
    down fails the run with one line before anything is written."""
    progress = progress or Progress(enabled=False)
    cached = None
    if settings.uses_model:
        if client is None:
            raise ValueError("these settings use a model: pass the model client")
        client.check()
        cached = CachedClient(client, dict(cache or {}), on_call=progress.on_call,
                              known_invalid=set(known_invalid or ()), waiting=progress.waiting)
    ontology = world.ontology
    model = cast(CachedClient, cached)  # set whenever the extractor or the reader is the model (uses_model)
    extractor: Extractor = (ModelExtractor(ontology, model, settings.prompt,
                                           extractor_id=extractor_id(settings, world), world_text=world.text,
                                           units=world.text_units, concurrency=settings.concurrency)
                            if settings.extractor == "model" else RegexExtractor(ontology))
    reader: Reader = (ModelReader(ontology, model, reader_id=reader_id(settings, world), version=settings.reader_prompt,
                                  units=world.text_units)
                      if settings.reader == "model" else DeterministicReader(ontology))
    return Session(settings, extractor, reader, cached, progress)
