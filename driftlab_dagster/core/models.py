"""Local model servers behind one interface: chat with a JSON reply, and embeddings.

Two real clients, each through its ecosystem's own library: Ollama's native API through the official
`ollama` client, and the OpenAI-compatible API (LM Studio, llama.cpp's llama-server, vLLM,
llama-cpp-python's server) through the `openai` client. `ReplayClient` answers from a table, for unit
tests of parsing. `CachedClient` puts a content-addressed cache in front of any of them.

Every call is explicit about timeout, seed and temperature 0. A server that is down raises
`ModelServerDown` (one line, naming the URL and how to start a server); anything that goes wrong with a
single call raises `ModelCallFailed`, which callers record as an outcome instead of crashing.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol

SEED = 7


@dataclass(frozen=True)
class ChatReply:
    """One chat completion: the text, what the server says it counted, and how long it took."""

    content: str
    input_tokens: int
    output_tokens: int
    latency_ms: float
    cached: bool = False


class ModelServerDown(RuntimeError):
    """No server answers at the configured URL."""


class ModelCallFailed(RuntimeError):
    """One call failed (timeout, HTTP error, bad model name): a recorded outcome, not a crash."""


def server_down_message(api: str, url: str, detail: str) -> str:
    how = ("start one with `ollama serve` (then `ollama pull MODEL`)" if api == "ollama" else
           "start one, e.g. LM Studio's server (`lms server start`) or `llama-server -m MODEL.gguf --port 8080`")
    return f"no {api} model server answers at {url} ({detail}): {how}, or pass --url"


class ModelClient(Protocol):
    api: str
    url: str
    model: str
    embed_model: str

    def chat_json(self, system: str, user: str, schema: dict | None) -> ChatReply: ...

    def embed(self, texts: list[str]) -> list[list[float]]: ...

    def check(self) -> None: ...


class OllamaClient:
    """Ollama's native API (`/api/chat`, `/api/embed`, `/api/tags`) through the official client.

    `url` defaults to $OLLAMA_HOST, then http://127.0.0.1:11434, as the client itself does.
    """

    api = "ollama"

    def __init__(self, url: str | None, model: str, embed_model: str = "nomic-embed-text", timeout: float = 300.0,
                 num_ctx: int = 4096):
        import os

        import ollama

        self.url = url or os.environ.get("OLLAMA_HOST") or "http://127.0.0.1:11434"
        self.model, self.embed_model, self.num_ctx = model, embed_model, num_ctx
        self._client = ollama.Client(host=self.url, timeout=timeout)
        self._errors = (ollama.ResponseError, ollama.RequestError)

    def _call(self, fn: Callable[[], Any]) -> Any:
        import httpx

        try:
            return fn()
        except ConnectionError as e:  # the client turns a refused connection into this
            raise ModelServerDown(server_down_message(self.api, self.url, "connection refused")) from e
        except httpx.TimeoutException as e:
            raise ModelCallFailed(f"timed out: {e}") from e
        except self._errors as e:
            raise ModelCallFailed(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else e}") from e
        except httpx.HTTPError as e:
            raise ModelCallFailed(f"{type(e).__name__}: {e}") from e

    def check(self) -> None:
        tags = self._call(self._client.list)
        names = {m.model for m in tags.models}
        if self.model not in names and f"{self.model}:latest" not in names:
            raise ModelServerDown(f"the ollama server at {self.url} has no model {self.model!r} "
                                  f"(it has: {', '.join(sorted(names)) or 'none'}): run `ollama pull {self.model}`")

    def chat_json(self, system: str, user: str, schema: dict | None) -> ChatReply:
        started = time.perf_counter()
        reply = self._call(lambda: self._client.chat(
            model=self.model, stream=False, format=schema or "json",
            options={"temperature": 0, "seed": SEED, "num_ctx": self.num_ctx},
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
        ))
        return ChatReply(reply.message.content or "", reply.prompt_eval_count or 0, reply.eval_count or 0,
                         (time.perf_counter() - started) * 1000)

    def embed(self, texts: list[str]) -> list[list[float]]:
        reply = self._call(lambda: self._client.embed(model=self.embed_model, input=texts))
        return [list(v) for v in reply.embeddings]


class OpenAICompatibleClient:
    """The OpenAI-compatible API (`/v1/chat/completions`, `/v1/embeddings`, `/v1/models`).

    Servers differ in the structured-output forms they accept: llama-server and LM Studio take
    `{"type": "json_schema", ...}`, llama-cpp-python's server only `{"type": "json_object", "schema": ...}`,
    others neither. The first call tries them in that order and the client keeps the first one accepted.
    """

    api = "openai"
    _FORMATS = ("json_schema", "json_object_schema", "none")

    def __init__(self, url: str | None, model: str, embed_model: str = "text-embedding", timeout: float = 300.0,
                 api_key: str | None = None):
        import openai

        self.url = (url or "http://127.0.0.1:1234").rstrip("/")
        base = self.url if self.url.endswith("/v1") else self.url + "/v1"
        self.model, self.embed_model = model, embed_model
        # Local servers ignore the key; the client library insists on one.
        self._client = openai.OpenAI(base_url=base, api_key=api_key or "not-needed", timeout=timeout, max_retries=0)
        self._openai = openai
        self.response_format: str | None = None  # decided by the first call

    def _call(self, fn: Callable[[], Any]) -> Any:
        openai = self._openai
        try:
            return fn()
        except openai.APIConnectionError as e:
            if isinstance(e, openai.APITimeoutError):
                raise ModelCallFailed(f"timed out after {self._client.timeout}s") from e
            raise ModelServerDown(server_down_message(self.api, self.url, "connection refused")) from e
        except openai.APIStatusError as e:
            raise ModelCallFailed(f"HTTP {e.status_code}: {str(e.message).splitlines()[0][:200]}") from e

    def check(self) -> None:
        models = self._call(self._client.models.list)
        names = {m.id for m in models.data}
        if names and self.model not in names:
            raise ModelServerDown(f"the server at {self.url} serves {', '.join(sorted(names))}, not {self.model!r}: "
                                  "pass --model with one of those ids")

    def _format(self, kind: str, schema: dict | None) -> dict | None:
        if schema is None or kind == "none":
            return None
        if kind == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema, "strict": True}}
        return {"type": "json_object", "schema": schema}

    def chat_json(self, system: str, user: str, schema: dict | None) -> ChatReply:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        kinds = [self.response_format] if self.response_format else list(self._FORMATS)
        last: ModelCallFailed | None = None
        for kind in kinds:
            fmt = self._format(kind, schema)
            started = time.perf_counter()
            try:
                reply = self._call(lambda: self._client.chat.completions.create(
                    model=self.model, messages=messages, temperature=0, seed=SEED, stream=False,
                    **({"response_format": fmt} if fmt else {}),
                ))
            except ModelCallFailed as e:
                last = e
                if self.response_format or "HTTP 4" not in str(e) and "HTTP 5" not in str(e):
                    raise
                continue  # this server rejects that response_format: try the next form
            self.response_format = kind
            usage = reply.usage
            return ChatReply(reply.choices[0].message.content or "", usage.prompt_tokens if usage else 0,
                             usage.completion_tokens if usage else 0, (time.perf_counter() - started) * 1000)
        assert last is not None
        raise last

    def embed(self, texts: list[str]) -> list[list[float]]:
        reply = self._call(lambda: self._client.embeddings.create(model=self.embed_model, input=texts))
        return [list(d.embedding) for d in sorted(reply.data, key=lambda d: d.index)]


class ReplayClient:
    """Answers from a function of (system, user), or from recorded replies (`from_file`): for tests of
    prompt building and reply parsing, and for Dagster-level tests of the model path without a server."""

    api = "replay"
    url = "replay://"

    def __init__(self, reply: Callable[[str, str], str], model: str = "replay", embed: Callable[[str], list[float]] | None = None):
        self._reply, self._embed = reply, embed
        self._recorded: Callable[[str], str] | None = None
        self.model, self.embed_model = model, model
        self.calls: list[tuple[str, str]] = []

    @classmethod
    def from_file(cls, path: str | Path, model: str, embed_model: str | None = None) -> "ReplayClient":
        """Replies recorded as JSON lines `{"key": <call_key>, "content": <reply text>}` (what
        `write_replay_file` writes from a call cache). A call that was not recorded fails as an outcome."""
        path = Path(path)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as e:
            raise ModelServerDown(f"cannot read the replay file {path} ({type(e).__name__}): record one with "
                                  "`write_replay_file` or point --replay-file at it") from None
        recorded: dict[str, str] = {}
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                recorded[str(item["key"])] = str(item["content"])
            except (ValueError, KeyError, TypeError):
                raise ModelServerDown(f"{path}: line {n} is not a recorded reply "
                                      '({"key": ..., "content": ...})') from None
        embed_model = embed_model or model

        def reply(key: str) -> str:
            if key not in recorded:
                raise ModelCallFailed("no recorded reply for this call in the replay file")
            return recorded[key]

        client = cls(lambda system, user: "", model=model)
        client.embed_model = embed_model
        client._recorded = reply
        client._embed = lambda text: json.loads(reply(call_key(embed_model, "embed", text, None)))
        return client

    def check(self) -> None:
        return None

    def chat_json(self, system: str, user: str, schema: dict | None) -> ChatReply:
        self.calls.append((system, user))
        if self._recorded is not None:
            content = self._recorded(call_key(self.model, system, user, schema))
            return ChatReply(content, (len(system) + len(user)) // 4, len(content) // 4, 0.0)
        content = self._reply(system, user)
        return ChatReply(content, (len(system) + len(user)) // 4, len(content) // 4, 0.0)

    def embed(self, texts: list[str]) -> list[list[float]]:
        if self._embed is None:
            raise ModelCallFailed("this replay client has no embeddings")
        return [self._embed(t) for t in texts]


# ---------------------------------------------------------------------------------------------------------
# The content-addressed cache.


def call_key(model: str, system: str, user: str, schema: dict | None) -> str:
    """sha256 of everything that decides a temperature-0 reply: model, prompt, input, schema, seed."""
    blob = json.dumps([model, system, user, schema, SEED, 0], sort_keys=True, ensure_ascii=False)
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

    @property
    def hit_rate(self) -> float:
        return self.hits / self.calls if self.calls else 0.0

    def since(self, earlier: "Spend") -> "Spend":
        """What was spent after `earlier` (a copy taken then): one partition's share of a run."""
        return Spend(*(getattr(self, f) - getattr(earlier, f) for f in self.__dataclass_fields__))


@dataclass
class CachedClient:
    """Any ModelClient behind a cache keyed by (model, prompt, input). Replies found in `entries` cost
    nothing; new ones are added to `entries` and listed in `new_entries` for the caller to persist."""

    inner: Any
    entries: dict[str, CacheEntry] = field(default_factory=dict)
    new_entries: list[CacheEntry] = field(default_factory=list)
    spend: Spend = field(default_factory=Spend)
    on_call: Callable[[ChatReply], None] | None = None

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def api(self) -> str:
        return self.inner.api

    def chat_json(self, system: str, user: str, schema: dict | None) -> ChatReply:
        key = call_key(self.inner.model, system, user, schema)
        entry = self.entries.get(key)
        if entry is not None:
            reply = ChatReply(entry.content, entry.input_tokens, entry.output_tokens, 0.0, cached=True)
            self.spend.hits += 1
        else:
            reply = self.inner.chat_json(system, user, schema)
            entry = CacheEntry(key, "chat", self.inner.model, reply.content, reply.input_tokens, reply.output_tokens,
                               round(reply.latency_ms, 1))
            self.entries[key] = entry
            self.new_entries.append(entry)
            self.spend.spent_input_tokens += reply.input_tokens
            self.spend.spent_output_tokens += reply.output_tokens
            self.spend.model_ms += reply.latency_ms
        self.spend.calls += 1
        self.spend.live_input_tokens += reply.input_tokens
        self.spend.live_output_tokens += reply.output_tokens
        if self.on_call:
            self.on_call(reply)
        return reply

    def embed(self, texts: list[str]) -> list[list[float]]:
        keys = [call_key(self.inner.embed_model, "embed", t, None) for t in texts]
        missing = [(k, t) for k, t in zip(keys, texts) if k not in self.entries]
        if missing:
            vectors = self.inner.embed([t for _, t in missing])
            for (k, _), v in zip(missing, vectors):
                entry = CacheEntry(k, "embed", self.inner.embed_model, json.dumps(v), 0, 0, 0.0)
                self.entries[k] = entry
                self.new_entries.append(entry)
        return [json.loads(self.entries[k].content) for k in keys]

    def check(self) -> None:
        self.inner.check()


def write_replay_file(entries: Iterable[CacheEntry], path: str | Path) -> Path:
    """Record replies (for example a run's `model_calls`) as a replay file, one JSON object a line."""
    path = Path(path)
    path.write_text("".join(json.dumps({"key": e.key, "content": e.content}, ensure_ascii=False) + "\n"
                            for e in entries), encoding="utf-8")
    return path


def build_client(api: str, url: str | None, model: str, embed_model: str, timeout: float,
                 api_key: str | None = None, replay_file: str | None = None) -> ModelClient:
    if api == "ollama":
        return OllamaClient(url, model, embed_model, timeout)
    if api == "openai":
        return OpenAICompatibleClient(url, model, embed_model, timeout, api_key=api_key)
    if api == "replay":
        if not replay_file:
            raise ModelServerDown("--api replay needs --replay-file (recorded replies, JSON lines)")
        return ReplayClient.from_file(replay_file, model, embed_model)
    raise ValueError(f"unknown model API {api!r}: use 'ollama', 'openai' or 'replay'")
