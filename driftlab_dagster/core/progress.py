"""A progress line for long model runs: partitions done, model calls, cache hits, rate and ETA."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from .clients import ChatReply


class Progress:
    def __init__(self, stream: TextIO | None = None, enabled: bool = True):
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.started = time.monotonic()
        self.calls = self.hits = self.tokens = 0
        self.label, self.done, self.total = "", 0, 0
        self._last = 0.0

    def stage(self, label: str, total: int) -> None:
        self.label, self.done, self.total = label, 0, total
        self.started = time.monotonic()
        self._draw(force=True)

    def advance(self) -> None:
        self.done += 1
        self._draw(force=self.done == self.total)
        if self.enabled and self.done == self.total:
            self.stream.write("\n")
            self.stream.flush()

    def on_call(self, reply: ChatReply) -> None:
        self.calls += 1
        self.hits += reply.cached
        self.tokens += reply.input_tokens + reply.output_tokens
        self._draw()

    def line(self) -> str:
        elapsed = max(time.monotonic() - self.started, 1e-6)
        rate = (self.calls - self.hits) / elapsed
        eta = ""
        if 0 < self.done < self.total:
            eta = f" ETA {(elapsed / self.done) * (self.total - self.done):.0f}s"
        width = 20
        filled = int(width * self.done / self.total) if self.total else 0
        return (f"{self.label:<14} [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} partitions"
                f" | model calls {self.calls} ({self.hits} cached) {rate:.1f}/s | {self.tokens} tokens{eta}")

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if force or now - self._last > 0.5:
            self._last = now
            self.stream.write("\r" + self.line())
            self.stream.flush()
