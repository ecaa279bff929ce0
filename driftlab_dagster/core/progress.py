"""A progress line for long model runs: partitions done, model calls, cache hits, rate and ETA; and, with or
without it, a line whenever one model call keeps the run waiting long (a slow server is not a hung run).
On a terminal the line is redrawn in place; into a file or a pipe (a log followed with `tail -f`) it is written
as a line of its own when a stage starts and ends and every PLAIN_EVERY_SECONDS between."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from .clients import ChatReply

WAIT_NOTICE_SECONDS = 15.0  # a call that has not answered after this long is said, and again each time as long
PLAIN_EVERY_SECONDS = 30.0  # how often the line is written into a file or a pipe
_WATCHER_IDLE_SECONDS = 30.0  # the watcher thread stops after this long without a call in flight


class Progress:
    def __init__(self, stream: TextIO | None = None, enabled: bool = True, wait_notices: bool = True):
        self.stream = stream or sys.stderr
        self.enabled = enabled
        isatty = getattr(self.stream, "isatty", None)
        self.redraws = bool(isatty and isatty())  # a terminal: the line redrawn in place
        self.wait_notices = wait_notices
        self.started = time.monotonic()
        self.calls = self.hits = self.tokens = 0
        self.label, self.done, self.total = "", 0, 0
        self._last = 0.0
        self._lock = threading.Lock()
        self._wait: tuple[str, float, float] | None = None  # the call in flight: what, since when, notice every
        self._watcher: threading.Thread | None = None

    @contextmanager
    def waiting(self, what: str) -> Iterator[None]:
        """Around one blocking model call: if it has not answered after WAIT_NOTICE_SECONDS (as set when the
        call starts), one line says what it waits for, and again after each further such interval. One
        watcher thread serves every call; it stops after a while without calls."""
        if not self.wait_notices:
            yield
            return
        with self._lock:
            self._wait = (what, time.monotonic(), WAIT_NOTICE_SECONDS)
            if self._watcher is None or not self._watcher.is_alive():
                self._watcher = threading.Thread(target=self._watch, daemon=True, name="driftlab-wait-notices")
                self._watcher.start()
        try:
            yield
        finally:
            with self._lock:
                self._wait = None

    def _watch(self) -> None:
        said: tuple[str, float, float] | None = None
        times, idle_since = 0, time.monotonic()
        while True:
            with self._lock:
                wait = self._wait
                if wait is None and time.monotonic() - idle_since > _WATCHER_IDLE_SECONDS:
                    self._watcher = None
                    return
            if wait is None:
                time.sleep(0.25)
                continue
            idle_since = time.monotonic()
            if wait is not said:
                said, times = wait, 0
            what, started, every = wait
            waited = time.monotonic() - started
            if waited >= every * (times + 1):
                times += 1
                below_the_line = "\n" if self.enabled and self.redraws else ""
                self.stream.write(f"{below_the_line}still waiting for {what}, {waited:.0f} s\n")
                self.stream.flush()
            time.sleep(min(every / 4, 0.25))

    def stage(self, label: str, total: int) -> None:
        self.label, self.done, self.total = label, 0, total
        self.started = time.monotonic()
        self._draw(force=True)

    def advance(self) -> None:
        self.done += 1
        self._draw(force=self.done == self.total)
        if self.enabled and self.redraws and self.done == self.total:
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
        if self.redraws and (force or now - self._last > 0.5):
            self.stream.write("\r" + self.line())
        elif not self.redraws and (force or now - self._last > PLAIN_EVERY_SECONDS):
            self.stream.write(self.line() + "\n")
        else:
            return
        self._last = now
        self.stream.flush()
