"""The progress object: a model call that keeps the run waiting is said, with or without the progress line."""

from __future__ import annotations

import io
import time

from driftlab_dagster.core import progress
from driftlab_dagster.core.progress import Progress


def test_a_long_wait_is_said_once_per_interval_and_a_quick_call_is_not(monkeypatch):
    """Issue 21, item 19 (the end-to-end check is in test_model_faults.py)."""
    monkeypatch.setattr(progress, "WAIT_NOTICE_SECONDS", 0.2)
    stream = io.StringIO()
    shown = Progress(stream, enabled=False)
    with shown.waiting("http://127.0.0.1:9 (model m), call 1"):
        time.sleep(0.5)
    with shown.waiting("http://127.0.0.1:9 (model m), call 2"):
        pass
    time.sleep(0.3)
    lines = stream.getvalue().splitlines()
    assert lines and all(line.startswith("still waiting for http://127.0.0.1:9 (model m), call 1, ") for line in lines)
    assert 1 <= len(lines) <= 2
    silent = io.StringIO()
    with Progress(silent, enabled=False, wait_notices=False).waiting("anything"):
        time.sleep(0.3)
    assert silent.getvalue() == ""


def test_into_a_log_the_line_is_written_whole_at_a_stage_and_at_most_once_an_interval_between(monkeypatch):
    """A study's log followed with `tail -f` stayed empty for a whole checkpoint: the line was drawn only on a
    terminal (with --progress into a file, as carriage returns on one endless line)."""
    from driftlab_dagster.core.clients import ChatReply

    monkeypatch.setattr(progress, "PLAIN_EVERY_SECONDS", 0.2)
    log = io.StringIO()
    shown = Progress(log, wait_notices=False)
    shown.stage("graph", 2)
    reply = ChatReply("{}", 3, 4, 1.0, cached=False)
    for _ in range(50):  # calls arriving every 10 ms: a line every 0.2 s, not one per call
        shown.on_call(reply)
        time.sleep(0.01)
    shown.advance()
    shown.advance()
    text = log.getvalue()
    assert "\r" not in text and text.endswith("\n")
    lines = text.splitlines()
    assert lines[0].startswith("graph") and "0/2 partitions" in lines[0]
    assert lines[-1].startswith("graph") and "2/2 partitions | model calls 50" in lines[-1]
    assert 3 <= len(lines) <= 2 + 50 * 0.01 / 0.2 + 2
