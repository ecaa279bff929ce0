"""The content-addressed cache of model calls, and what a run spent on them.

`CachedClient` puts the cache in front of any client (clients.py, replay.py): a reply is keyed by
everything that decides a temperature-0 reply, checked (size cap, then the caller's validator) before it is
kept, so garbage is never replayed, and a streak of failed or unusable calls stops the run with
`ModelServerDown` instead of recording empty outcomes. The cache itself is persisted by the warehouse
(`model_calls`), so a rerun, a backfill or another scenario over the same page versions pays nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from .clients import SEED, ChatReply, ModelCallFailed, ModelServerDown, ReplyInvalid, first_line, redact
from .replies import MAX_REPLY_CHARS

MAX_FAILURE_STREAK = 8  # this many failed or unusable calls in a row stop the run: the server is broken


def call_key(model: str, system: str, user: str, schema: dict | None, max_tokens: int | None = None) -> str:
    """sha256 of everything that decides a temperature-0 reply: model, prompt, input, schema, seed, and the
    reply length cap when there is one (a capped reply can be cut short)."""
    parts: list[Any] = [model, system, user, schema, SEED, 0] + ([max_tokens] if max_tokens else [])
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


@dataclass
class CacheEntry:
    key: str
    kind: str  # "chat" or "embed"
    model: str
    content: str  # the reply text, or the embedding as JSON
    input_tokens: int
    output_tokens: int
    latency_ms: float


@dataclass
class Spend:
    """Tokens a live system would have paid (every call) versus what this run spent (cache misses)."""

    calls: int = 0
    hits: int = 0
    live_input_tokens: int = 0
    live_output_tokens: int = 0
    spent_input_tokens: int = 0
    spent_output_tokens: int = 0
    model_ms: float = 0.0
    failed: int = 0  # calls that raised after their retries (a timeout, a 5xx, an unreadable body)
    invalid: int = 0  # replies that came back but could not be used (too long, not the expected JSON)

    @property
    def hit_rate(self) -> float:
        return self.hits / self.calls if self.calls else 0.0

    def since(self, earlier: Spend) -> Spend:
        """What was spent after `earlier` (a copy taken then): one partition's share of a run."""
        return Spend(*(getattr(self, f) - getattr(earlier, f) for f in self.__dataclass_fields__))


@dataclass
class CachedClient:
    """Any ModelClient behind a cache keyed by (model, prompt, input). Replies found in `entries` cost
    nothing; new ones are checked (size, then the caller's `validate`) and only then added to `entries` and
    listed in `new_entries` for the caller to persist. A streak of failed or unusable calls stops the run."""

    inner: Any
    entries: dict[str, CacheEntry] = field(default_factory=dict)
    new_entries: list[CacheEntry] = field(default_factory=list)
    spend: Spend = field(default_factory=Spend)
    on_call: Callable[[ChatReply], None] | None = None
    failure_streak: int = 0
    last_failure: str = ""
    # Calls that failed in this session, by key: asked again (another scenario re-reading the same page),
    # they fail the same way without troubling the server. Never persisted: the next run asks again.
    failed_keys: dict[str, ModelCallFailed] = field(default_factory=dict)
    # Keys whose reply was unusable in an earlier run: asked again (the server may have been fixed), but a
    # second unusable reply is that prompt's trouble, not news about the server, so it does not extend the
    # streak. `new_failures` (key -> (model, reason)) is what this run adds, for the caller to persist.
    known_invalid: set[str] = field(default_factory=set)
    new_failures: dict[str, tuple[str, str]] = field(default_factory=dict)
    # Replies fetched ahead by `prefetch`, by key, each taken once by `chat_json` in the caller's order.
    prefetched: dict[str, ChatReply | ModelCallFailed] = field(default_factory=dict)
    embed_length: int = 0  # the length of every embedding of this session, once one came back
    waiting: Callable[[str], AbstractContextManager[None]] | None = None  # says what a slow call waits for

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def api(self) -> str:
        return self.inner.api

    def _failed(self, error: ModelCallFailed) -> None:
        self.failure_streak += 1
        self.last_failure = str(error)
        if self.failure_streak >= MAX_FAILURE_STREAK:
            raise ModelServerDown(
                f"the last {self.failure_streak} model calls to {redact(self.inner.url)} failed (last: {error}); "
                "stopping instead of recording more empty outcomes: check the server and the model, then rerun "
                "(replies already cached are kept)")

    def chat_json(self, system: str, user: str, schema: dict | None, max_tokens: int | None = None,
                  validate: Callable[[str], object] | None = None) -> ChatReply:
        """A reply, from the cache or the model. `validate(content)` raises (any exception) when the reply
        is unusable; such a reply raises `ReplyInvalid` and is not cached."""
        key = call_key(self.inner.model, system, user, schema, max_tokens)
        entry = self.entries.get(key)
        self.spend.calls += 1
        if key in self.failed_keys:
            error = self.failed_keys[key]
            self.spend.invalid += isinstance(error, ReplyInvalid)
            self.spend.failed += not isinstance(error, ReplyInvalid)
            raise error
        if entry is not None:
            reply = ChatReply(entry.content, entry.input_tokens, entry.output_tokens, 0.0, cached=True)
            self.spend.hits += 1
        else:
            try:
                reply = self._live_reply(key, system, user, schema, max_tokens)
            except ModelCallFailed as e:
                self.spend.failed += 1
                self.failed_keys[key] = e
                self._failed(e)
                raise
            self.spend.spent_input_tokens += reply.input_tokens
            self.spend.spent_output_tokens += reply.output_tokens
            self.spend.model_ms += reply.latency_ms
            try:
                check_reply(reply.content, validate)
            except ReplyInvalid as e:
                self.spend.invalid += 1
                self.failed_keys[key] = e
                self.new_failures[key] = (self.inner.model, str(e))
                if key not in self.known_invalid:
                    self._failed(e)
                raise
            self.failure_streak = 0
            entry = CacheEntry(key, "chat", self.inner.model, reply.content, reply.input_tokens, reply.output_tokens,
                               round(reply.latency_ms, 1))
            self.entries[key] = entry
            self.new_entries.append(entry)
        self.spend.live_input_tokens += reply.input_tokens
        self.spend.live_output_tokens += reply.output_tokens
        if self.on_call:
            self.on_call(reply)
        return reply

    def _live_reply(self, key: str, system: str, user: str, schema: dict | None,
                    max_tokens: int | None) -> ChatReply:
        ahead = self.prefetched.pop(key, None)
        if isinstance(ahead, ModelCallFailed):
            raise ahead
        if ahead is not None:
            return ahead
        with self._waiting(f"call {self.spend.calls}"):
            return self.inner.chat_json(system, user, schema, max_tokens)

    def prefetch(self, calls: list[tuple[str, str, dict | None, int | None]], concurrency: int) -> None:
        """Ask the server, `concurrency` at a time, for the replies to `calls` (system, user, schema,
        max_tokens) that the cache does not hold; each waits in `prefetched` until `chat_json` asks for it.
        Only the HTTP calls overlap: accounting, checks, the cache and the failure streak all happen in
        `chat_json`, in the caller's order, so the rows are the same as one call at a time."""
        wanted: dict[str, tuple[str, str, dict | None, int | None]] = {}
        for system, user, schema, max_tokens in calls:
            key = call_key(self.inner.model, system, user, schema, max_tokens)
            if key not in self.entries and key not in self.failed_keys and key not in self.prefetched:
                wanted.setdefault(key, (system, user, schema, max_tokens))
        if concurrency <= 1 or len(wanted) <= 1:
            return

        def ask(call: tuple[str, str, dict | None, int | None]) -> ChatReply | ModelCallFailed:
            try:
                return self.inner.chat_json(*call)
            except ModelCallFailed as e:
                return e

        with (self._waiting(f"{len(wanted)} calls, {concurrency} in flight"),
              ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="model-call") as pool):
            for key, result in zip(wanted, pool.map(ask, wanted.values())):
                self.prefetched[key] = result

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Vectors for `texts`, from the cache or the server, all of one length. Retrieval cannot go on
        without them, so a failed embeddings call (after its retries) stops the run in one line that names
        the server and the embedding model, rather than being recorded as an outcome."""
        keys = [call_key(self.inner.embed_model, "embed", t, None) for t in texts]
        missing = list(dict.fromkeys((k, t) for k, t in zip(keys, texts) if k not in self.entries))
        if missing:
            try:
                with self._waiting(f"embeddings of {len(missing)} texts", self.inner.embed_model):
                    vectors = self.inner.embed([t for _, t in missing])
            except ModelCallFailed as e:
                self.spend.failed += 1
                raise self._embeddings_failed(str(e)) from None
            self.failure_streak = 0
            for (k, _), v in zip(missing, vectors):
                entry = CacheEntry(k, "embed", self.inner.embed_model, json.dumps(v), 0, 0, 0.0)
                self.entries[k] = entry
                self.new_entries.append(entry)
        out = [json.loads(self.entries[k].content) for k in keys]
        lengths = sorted({len(v) for v in out} | ({self.embed_length} if self.embed_length else set()))
        if len(lengths) > 1:  # within one reply, or against earlier ones (a query against the pages' matrix)
            raise self._embeddings_failed(f"embeddings of different lengths ({', '.join(map(str, lengths))})")
        self.embed_length = self.embed_length or (lengths[0] if lengths else 0)
        return out

    def _waiting(self, call: str, model: str | None = None) -> AbstractContextManager[None]:
        """What a slow call waits for, said while it waits (`waiting`, the progress object's)."""
        what = f"{redact(self.inner.url)} (model {model or self.inner.model}), {call}"
        return self.waiting(what) if self.waiting else nullcontext()

    def _embeddings_failed(self, what: str) -> ModelServerDown:
        return ModelServerDown(
            f"embeddings from {self.inner.api} server {redact(self.inner.url)} (embedding model "
            f"{self.inner.embed_model!r}) failed: {what}; --retrieval embed needs a server that serves that model "
            "(pass --embed-model with one it serves, or --url), or use --retrieval bm25")

    def check(self) -> None:
        self.inner.check()


def check_reply(content: str, validate: Callable[[str], object] | None = None) -> None:
    """Raise `ReplyInvalid` unless `content` is short enough and `validate` accepts it."""
    if len(content) > MAX_REPLY_CHARS:
        raise ReplyInvalid(f"reply of {len(content):,} characters (at most {MAX_REPLY_CHARS:,})")
    if validate is not None:
        try:
            validate(content)
        except Exception as e:  # noqa: BLE001 - any complaint of the validator means "do not keep this"
            raise ReplyInvalid(f"unusable reply: {first_line(e, 120)}") from None
