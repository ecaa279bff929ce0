"""Local model servers behind one interface: chat with a JSON or plain-text reply, and embeddings.

Two real clients, each through its ecosystem's own library: Ollama's native API through the official
`ollama` client, and the OpenAI-compatible API (LM Studio, llama.cpp's llama-server, vLLM,
llama-cpp-python's server) through the `openai` client. Recorded replies stand in for a server in
`replay.py`; the content-addressed cache in front of any of them is `call_cache.py`.

Every call is explicit about timeout, seed and temperature 0. Faults are outcomes, never poison:

- a server that is down when the run starts raises `ModelServerDown` (one line: the URL, how to start one);
- a dropped connection, a timeout, HTTP 429 or 5xx is retried with backoff; if it keeps failing, or a
  reply cannot be read (HTML, no choices, content that is not text), the call raises `ModelCallFailed`,
  which callers record as an outcome;
- several servers of one model (`url` lists them, separated by commas) are one `ServerPool`: calls in flight
  go to the least busy;
- credentials come from the environment (`OPENAI_API_KEY`, `OLLAMA_API_KEY`) and URLs are printed with any
  password removed.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from .errors import UserError

SEED = 7
ATTEMPTS = 3  # one call plus two retries, for faults that may pass (a dropped connection, a 5xx, a timeout)
BACKOFF_SECONDS = 0.5  # doubled after each failed attempt
MAX_EMBED_DIMENSIONS = 16_384


@dataclass(frozen=True)
class ChatReply:
    """One chat completion: the text, what the server says it counted, and how long it took."""

    content: str
    input_tokens: int
    output_tokens: int
    latency_ms: float
    cached: bool = False


class ModelServerDown(UserError, RuntimeError):
    """No server answers at the configured URL, or it keeps failing: the run stops, in one line."""


class ModelCallFailed(RuntimeError):
    """One call failed (timeout, HTTP error, unreadable reply): a recorded outcome, not a crash."""


class TransientCallError(ModelCallFailed):
    """A fault that may pass on its own: worth another attempt."""


class ReplyInvalid(ModelCallFailed):
    """The server answered, but not with something this call can use; never cached."""


def redact(url: str | None) -> str:
    """A URL as it may be printed or stored: any user:password part replaced."""
    return re.sub(r"(?<=://)[^/@\s]*@", "***@", url) if url else ""


def server_down_message(api: str, url: str, detail: str) -> str:
    how = ("start one with `ollama serve` (then `ollama pull MODEL`)" if api == "ollama" else
           "start one, e.g. `make model-server`, LM Studio's server (`lms server start`) or "
           "`llama-server -m MODEL.gguf --port 8080`")
    return f"no {api} model server answers at {redact(url)} ({detail}): {how}, or pass --url"


def with_retries(call: Callable[[], Any], attempts: int | None = None, backoff: float | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> Any:
    """Run `call`, retrying transient faults with exponential backoff; the last fault is raised as a
    plain `ModelCallFailed` saying how many attempts were made. The defaults are the module's ATTEMPTS and
    BACKOFF_SECONDS as they are when called (a test may shorten the wait)."""
    attempts = ATTEMPTS if attempts is None else attempts
    backoff = BACKOFF_SECONDS if backoff is None else backoff
    for attempt in range(1, attempts + 1):
        try:
            return call()
        except TransientCallError as e:
            if attempt == attempts:
                raise ModelCallFailed(f"{e} (after {attempts} attempts)") from None
            sleep(backoff * 2 ** (attempt - 1))
    raise AssertionError("unreachable")


def first_line(error: BaseException, limit: int = 200) -> str:
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return text[:limit]


def check_embeddings(vectors: Any, count: int) -> list[list[float]]:
    """Embeddings as the caller needs them: `count` vectors of one length, finite numbers only."""
    if not isinstance(vectors, list) or len(vectors) != count:
        raise ReplyInvalid(f"expected {count} embeddings, got {type(vectors).__name__}"
                           + (f" of {len(vectors)}" if isinstance(vectors, list) else ""))
    out = []
    for v in vectors:
        if not isinstance(v, (list, tuple)) or not 0 < len(v) <= MAX_EMBED_DIMENSIONS:
            raise ReplyInvalid("an embedding is not a list of numbers")
        row = [float(x) for x in v if isinstance(x, (int, float)) and not isinstance(x, bool)]
        if len(row) != len(v) or not all(math.isfinite(x) for x in row):
            raise ReplyInvalid("an embedding holds something other than finite numbers")
        out.append(row)
    if len({len(v) for v in out}) > 1:
        raise ReplyInvalid("embeddings of different lengths")
    return out


class ModelClient(Protocol):
    api: str
    url: str
    model: str
    embed_model: str

    def chat_json(self, system: str, user: str, schema: dict | None, max_tokens: int | None = None) -> ChatReply:
        """A temperature-0 reply: JSON under `schema` when one is given, plain text when it is None."""
        ...

    def embed(self, texts: list[str]) -> list[list[float]]: ...

    def check(self) -> None: ...


class OllamaClient:
    """Ollama's native API (`/api/chat`, `/api/embed`, `/api/tags`) through the official client.

    `url` defaults to $OLLAMA_HOST, then http://127.0.0.1:11434, as the client itself does; a key (for an
    Ollama behind an authenticating proxy, or Ollama's cloud) is sent as a bearer header.
    """

    api = "ollama"

    def __init__(self, url: str | None, model: str, embed_model: str = "nomic-embed-text", timeout: float = 300.0,
                 num_ctx: int = 4096, api_key: str | None = None):
        import ollama

        self.url = url or os.environ.get("OLLAMA_HOST") or "http://127.0.0.1:11434"
        self.model, self.embed_model, self.num_ctx = model, embed_model, num_ctx
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else None
        self._client = ollama.Client(host=self.url, timeout=timeout, headers=headers)
        self._ollama = ollama

    def _once(self, fn: Callable[[], Any]) -> Any:
        import httpx

        try:
            return fn()
        except ConnectionError as e:  # the client turns a refused or dropped connection into this
            raise TransientCallError("connection refused or dropped") from e
        except httpx.TimeoutException as e:
            raise TransientCallError(f"timed out ({first_line(e)})") from e
        except self._ollama.ResponseError as e:
            status = getattr(e, "status_code", 0) or 0
            error = TransientCallError if status >= 500 or status == 429 else ModelCallFailed
            raise error(f"HTTP {status}: {first_line(e)}") from e
        except httpx.HTTPError as e:
            raise TransientCallError(f"{type(e).__name__}: {first_line(e)}") from e
        except Exception as e:  # a body the client could not read (HTML, truncated JSON, wrong shape)
            raise ModelCallFailed(f"unreadable reply ({type(e).__name__}: {first_line(e)})") from e

    def _call(self, fn: Callable[[], Any]) -> Any:
        return with_retries(lambda: self._once(fn))

    def check(self) -> None:
        try:
            tags = self._once(self._client.list)
        except ModelCallFailed as e:
            raise ModelServerDown(server_down_message(self.api, self.url, str(e))) from None
        names = {m.model for m in tags.models}
        if self.model not in names and f"{self.model}:latest" not in names:
            raise ModelServerDown(f"the ollama server at {redact(self.url)} has no model {self.model!r} "
                                  f"(it has: {', '.join(sorted(names)) or 'none'}): run `ollama pull {self.model}`")

    def chat_json(self, system: str, user: str, schema: dict | None, max_tokens: int | None = None) -> ChatReply:
        started = time.perf_counter()
        options = {"temperature": 0, "seed": SEED, "num_ctx": self.num_ctx}
        if max_tokens:
            options["num_predict"] = max_tokens
        reply = self._call(lambda: self._client.chat(
            model=self.model, stream=False, format=schema, options=options,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
        ))
        content = getattr(getattr(reply, "message", None), "content", None)
        if content is not None and not isinstance(content, str):
            raise ModelCallFailed("reply content is not text")
        return ChatReply(content or "", int(reply.prompt_eval_count or 0), int(reply.eval_count or 0),
                         (time.perf_counter() - started) * 1000)

    def embed(self, texts: list[str]) -> list[list[float]]:
        reply = self._call(lambda: self._client.embed(model=self.embed_model, input=texts))
        return check_embeddings(list(getattr(reply, "embeddings", None) or []), len(texts))


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
        # Local servers ignore the key; the client library insists on one. Retries are ours (with_retries).
        self._client = openai.OpenAI(base_url=base, api_key=api_key or "not-needed", timeout=timeout, max_retries=0)
        self._openai = openai
        self.response_format: str | None = None  # decided by the first call

    def _once(self, fn: Callable[[], Any]) -> Any:
        openai = self._openai
        try:
            return fn()
        except openai.APITimeoutError as e:
            raise TransientCallError(f"timed out after {self._client.timeout}s") from e
        except openai.APIConnectionError as e:
            raise TransientCallError("connection refused or dropped") from e
        except openai.APIStatusError as e:
            error = TransientCallError if e.status_code >= 500 or e.status_code == 429 else ModelCallFailed
            raise error(f"HTTP {e.status_code}: {first_line(Exception(e.message))}") from e
        except Exception as e:  # a body the client could not read (HTML, truncated JSON, wrong shape)
            raise ModelCallFailed(f"unreadable reply ({type(e).__name__}: {first_line(e)})") from e

    def _call(self, fn: Callable[[], Any]) -> Any:
        return with_retries(lambda: self._once(fn))

    def check(self) -> None:
        try:
            # The raw reply, read here: the client library, given HTML, fails deep inside its own parser
            # ("'str' object has no attribute '_set_private_attributes'").
            raw = self._once(self._client.models.with_raw_response.list)
        except ModelCallFailed as e:
            raise ModelServerDown(server_down_message(self.api, self.url, str(e))) from None
        names = self._model_ids(str(raw.url), raw.text)
        if names and self.model not in names:
            raise ModelServerDown(f"the server at {redact(self.url)} serves {', '.join(sorted(names))}, not "
                                  f"{self.model!r}: pass --model with one of those ids")

    def _model_ids(self, where: str, body: str) -> set[str]:
        """The model ids a /v1/models reply lists; a reply that is not such a list is a server to name."""
        try:
            payload = json.loads(body)
        except ValueError:
            kind = "HTML" if body.lstrip()[:1] == "<" else "text that is not JSON"
            raise ModelServerDown(f"the server at {redact(self.url)} answered {redact(where)} with {kind}: is it an "
                                  "OpenAI-compatible server? Pass --url of one (e.g. http://127.0.0.1:8080; /v1 is "
                                  "added), or --api ollama for Ollama") from None
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise ModelServerDown(f"the server at {redact(self.url)} answered {redact(where)} with JSON that lists no "
                                  "models (no `data` list): is it an OpenAI-compatible server? Pass --url of one, or "
                                  "--api ollama for Ollama")
        return {m["id"] for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)}

    def _format(self, kind: str, schema: dict | None) -> dict | None:
        if schema is None or kind == "none":
            return None
        if kind == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema, "strict": True}}
        return {"type": "json_object", "schema": schema}

    def chat_json(self, system: str, user: str, schema: dict | None, max_tokens: int | None = None) -> ChatReply:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        limit = {"max_tokens": max_tokens} if max_tokens else {}

        def create(kind: str) -> Any:
            fmt = self._format(kind, schema)
            # What local servers take rather than only what the OpenAI types describe (llama-cpp-python's
            # {"type": "json_object", "schema": ...}), so the request goes as plain keyword arguments.
            request: dict[str, Any] = dict(model=self.model, messages=messages, temperature=0, seed=SEED,
                                           stream=False, **limit, **({"response_format": fmt} if fmt else {}))
            return self._client.chat.completions.create(**request)

        started = time.perf_counter()
        if schema is None:  # plain text: no structured-output form to choose
            return self._reply(self._call(lambda: create("none")), started)
        if self.response_format is not None:
            return self._reply(self._call(functools.partial(create, self.response_format)), started)
        # The first call finds the structured-output form this server takes: a form it rejects (HTTP 4xx, or
        # 500 from llama-cpp-python's server) moves on to the next form, without retrying the rejected one.
        for kind in self._FORMATS[:-1]:
            started = time.perf_counter()
            try:
                reply = self._once(functools.partial(create, kind))
            except ModelCallFailed as e:
                if str(e).startswith("HTTP "):
                    continue
                if not isinstance(e, TransientCallError):
                    raise
                reply = self._call(functools.partial(create, kind))  # the server dropped us: retry this form as usual
            self.response_format = kind
            return self._reply(reply, started)
        started = time.perf_counter()
        reply = self._call(lambda: create(self._FORMATS[-1]))  # no response_format: every server takes it
        self.response_format = self._FORMATS[-1]
        return self._reply(reply, started)

    @staticmethod
    def _reply(reply: Any, started: float) -> ChatReply:
        choices = getattr(reply, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise ModelCallFailed("reply has no choices")
        content = getattr(getattr(choices[0], "message", None), "content", None)
        if content is not None and not isinstance(content, str):
            raise ModelCallFailed("reply content is not text")
        usage = getattr(reply, "usage", None)
        return ChatReply(content or "", int(getattr(usage, "prompt_tokens", 0) or 0),
                         int(getattr(usage, "completion_tokens", 0) or 0), (time.perf_counter() - started) * 1000)

    def embed(self, texts: list[str]) -> list[list[float]]:
        reply = self._call(lambda: self._client.embeddings.create(model=self.embed_model, input=texts))
        data = getattr(reply, "data", None)
        if not isinstance(data, list):
            raise ReplyInvalid("embeddings reply has no data")
        try:
            ordered = [d.embedding for d in sorted(data, key=lambda d: d.index)]
        except (AttributeError, TypeError) as e:
            raise ReplyInvalid(f"unreadable embeddings ({first_line(e)})") from None
        return check_embeddings(ordered, len(texts))


def server_urls(url: str | None) -> list[str | None]:
    """The servers a `url` setting names: several separated by commas ("http://a:8080,http://b:8080"), one,
    or none (None: the client's own default)."""
    urls = [u.strip() for u in (url or "").split(",") if u.strip()]
    return list(dict.fromkeys(urls)) or [None]


class ServerPool:
    """Several servers of one model as one client: each call goes to the member with the fewest calls in
    flight, so k calls in flight (the `concurrency` setting) spread over the servers. Which server answered
    never shows in a row: every member serves the same model at temperature 0, and a reply is cached under
    the model and the call, not the server. A member that is down fails the check at the start, by its URL."""

    def __init__(self, members: list[ModelClient]):
        if not members:
            raise ValueError("a server pool needs at least one server")
        first = members[0]
        self.members = members
        self.api, self.model, self.embed_model = first.api, first.model, first.embed_model
        self.url = ",".join(m.url for m in members)
        self._lock = threading.Lock()
        self._in_flight = [0] * len(members)

    def _on_least_busy(self, call: Callable[[ModelClient], Any]) -> Any:
        with self._lock:
            index = min(range(len(self.members)), key=self._in_flight.__getitem__)
            self._in_flight[index] += 1
        try:
            return call(self.members[index])
        finally:
            with self._lock:
                self._in_flight[index] -= 1

    def check(self) -> None:
        for member in self.members:
            member.check()

    def chat_json(self, system: str, user: str, schema: dict | None, max_tokens: int | None = None) -> ChatReply:
        return self._on_least_busy(lambda m: m.chat_json(system, user, schema, max_tokens))

    def embed(self, texts: list[str]) -> list[list[float]]:
        return self._on_least_busy(lambda m: m.embed(texts))


def pooled(make: Callable[[str | None], ModelClient], url: str | None) -> ModelClient:
    """One client for the server `url` names, or a `ServerPool` over the several it lists."""
    members = [make(u) for u in server_urls(url)]
    return members[0] if len(members) == 1 else ServerPool(members)
