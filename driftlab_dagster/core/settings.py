"""How one run builds and reads its knowledge layer: the study's settings, with their defaults. The defaults
call no model. `DriftlabConfig` (driftlab_dagster/config.py) carries them beside where the files are, the
command line derives one flag per field, and `session.open_session` turns them into objects."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .prompts import DEFAULT_EXTRACTION_PROMPT, DEFAULT_READER_PROMPT, EXTRACTION_PROMPTS, READER_PROMPTS


class StudySettings(BaseModel):
    """How the knowledge layer is built and read. The defaults call no model."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    extractor: Literal["regex", "model"] = Field(
        "regex", description="who writes the graph: regex (the ontology's own patterns, no model) or model")
    reader: Literal["deterministic", "model"] = Field(
        "deterministic", description="who answers: deterministic (no model) or model (answers from the evidence)")
    retrieval: Literal["bm25", "embed"] = Field(
        "bm25", description="page retrieval: bm25 (rank-bm25) or embed (the model server's embeddings)")
    api: Literal["ollama", "openai", "replay"] = Field(
        "ollama", description="model API: ollama (native), openai (OpenAI-compatible: LM Studio, llama-server), "
                              "replay (recorded replies from --replay-file, no server)")
    url: str | None = Field(
        None, description="model server URL (ollama: $OLLAMA_HOST or http://127.0.0.1:11434; openai: "
                          "http://127.0.0.1:1234), or several of one model separated by commas: calls in flight "
                          "(--concurrency) go to the least busy")
    model: str = Field("qwen2.5:7b", min_length=1, description="chat model id as the server names it")
    embed_model: str = Field("nomic-embed-text", min_length=1, description="embedding model id")
    prompt: str = Field(DEFAULT_EXTRACTION_PROMPT,
                        description=f"extraction prompt version: {', '.join(EXTRACTION_PROMPTS)}")
    reader_prompt: str = Field(DEFAULT_READER_PROMPT,
                               description=f"model reader prompt version: {', '.join(READER_PROMPTS)} (plain-text "
                                           "answers from evidence cut to the hop's statements)")
    timeout: float = Field(300.0, gt=0, le=3600, description="seconds one model call may take")
    replay_file: str | None = Field(None, description="recorded model replies (JSON lines) for --api replay")
    governed_when_silent: Literal["auto", "abstain", "pages"] = Field(
        "auto", description="what the Governed design answers where its graph holds nothing: abstain (\"not in "
                            "graph\"), or pages (the reader reads the pages Rag is shown, and its answer is kept, "
                            "hedged, only where one of them states it of the asked thing); auto: pages for a wiki's "
                            "history (a corpus world, whose graph lacks what the model could not extract), abstain "
                            "for a templated world (whose sentences are read exactly)")
    concurrency: int = Field(1, ge=1, le=64, description="model calls the extractor and the reader keep in flight at "
                                                         "once (match the server's slots); the rows are the same for "
                                                         "every value")
    workers: int = Field(1, ge=1, le=64, description="processes a step spreads its model-free work over (the "
                                                     "scenarios the pages and graph steps render and replay, the "
                                                     "partitions the answers step asks); the rows are the same for "
                                                     "every value; a step that calls a model runs in one")

    @property
    def model_free_workers(self) -> int:
        """The workers the answers step may use: it calls the model reader, the embedder and (for pages the
        graph has not read) the model extractor, whose calls (cache, spend, failure streak) stay in one process."""
        return 1 if self.uses_model else self.workers

    @field_validator("prompt")
    @classmethod
    def _known_prompt(cls, value: str) -> str:
        if value not in EXTRACTION_PROMPTS:
            raise ValueError(f"unknown extraction prompt {value!r}: use one of {', '.join(EXTRACTION_PROMPTS)}")
        return value

    @field_validator("reader_prompt")
    @classmethod
    def _known_reader_prompt(cls, value: str) -> str:
        if value not in READER_PROMPTS:
            raise ValueError(f"unknown reader prompt {value!r}: use one of {', '.join(READER_PROMPTS)}")
        return value

    @model_validator(mode="after")
    def _replay_needs_a_file(self) -> StudySettings:
        # Without it the replay client would read the path "" (the current folder): say what is missing.
        if self.api == "replay" and self.uses_model and not (self.replay_file or "").strip():
            raise ValueError("--api replay needs --replay-file (the recorded replies, JSON lines; `replay_file` in "
                             "the settings file): pass one, or pick --api ollama / --api openai")
        return self

    @property
    def uses_model(self) -> bool:
        return self.extractor == "model" or self.reader == "model" or self.retrieval == "embed"

    def prose_unread(self, described: int) -> str | None:
        """What these settings leave unread of a world whose `described` relations are declared by description
        for prose (a corpus world's): the regex extractor and the deterministic reader parse only templated
        sentences, so such a run would answer only by abstaining while its tables look like a finding. None
        when every part reads the prose or there is none. The command line prints it and the answers asset
        shows it in each partition's metadata, in the same words."""
        if not described:
            return None
        unread = []
        if self.extractor == "regex":
            unread.append("the regex extractor writes no fact of them (--extractor model does; in the settings "
                          "file, extractor: model)")
        if self.reader == "deterministic":
            unread.append("the deterministic reader reads no page for them, so Rag and Hybrid's pages answer "
                          "nothing (--reader model does; in the settings file, reader: model)")
        if not unread:
            return None
        return (f"{described} of this world's relations are declared by description for prose, which no "
                f"model-free part reads: {'; '.join(unread)}")
