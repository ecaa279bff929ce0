"""Recorded replies instead of a model server: for tests of prompt building and reply parsing, for
Dagster-level tests of the model path without a server, and for replaying a run (`--api replay`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path

from .call_cache import CacheEntry, call_key
from .clients import ChatReply, ModelCallFailed, ModelServerDown


class ReplayClient:
    """Answers from a function of (system, user), or from recorded replies (`from_file`): for tests of
    prompt building and reply parsing, and for Dagster-level tests of the model path without a server."""

    api = "replay"
    url = "replay://"

    def __init__(self, reply: Callable[[str, str], str], model: str = "replay",
                 embed: Callable[[str], list[float]] | None = None):
        self._reply, self._embed = reply, embed
        self._recorded: Callable[[str], str] | None = None
        self.model, self.embed_model = model, model
        self.calls: list[tuple[str, str]] = []

    @classmethod
    def from_file(cls, path: str | Path, model: str, embed_model: str | None = None) -> ReplayClient:
        """Replies recorded as JSON lines `{"key": <call_key>, "content": <reply text>}` (what
        `write_replay_file` writes from a call cache). A call that was not recorded fails as an outcome."""
        if not str(path).strip():  # Path("") is the current folder: "cannot read the replay file ." helps nobody
            raise ModelServerDown("--api replay needs --replay-file (the recorded replies, JSON lines): pass one, or "
                                  "pick --api ollama / --api openai")
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

    def chat_json(self, system: str, user: str, schema: dict | None, max_tokens: int | None = None) -> ChatReply:
        self.calls.append((system, user))
        if self._recorded is not None:
            content = self._recorded(call_key(self.model, system, user, schema, max_tokens))
        else:
            content = self._reply(system, user)
        return ChatReply(content, (len(system) + len(user)) // 4, len(content) // 4, 0.0)

    def embed(self, texts: list[str]) -> list[list[float]]:
        if self._embed is None:
            raise ModelCallFailed("this replay client has no embeddings")
        return [self._embed(t) for t in texts]


def write_replay_file(entries: Iterable[CacheEntry], path: str | Path) -> Path:
    """Record replies (for example a run's `model_calls`) as a replay file, one JSON object a line."""
    path = Path(path)
    path.write_text("".join(json.dumps({"key": e.key, "content": e.content}, ensure_ascii=False) + "\n"
                            for e in entries), encoding="utf-8")
    return path
