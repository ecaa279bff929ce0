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
