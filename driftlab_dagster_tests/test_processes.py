"""What the kernel says about a process: a process killed and not yet reaped is a zombie and no longer runs
(what lets a rerun right after `kill -9` go on, and `make pg-down` see its services gone)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from driftlab_dagster.processes import is_zombie, process_start, runs

pytestmark = pytest.mark.system  # it starts a process


def test_a_killed_process_not_yet_reaped_no_longer_runs():
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert runs(process.pid) and not is_zombie(process.pid)
        assert process_start(process.pid) != process_start(1)  # its own start time, not another's
        process.kill()
        deadline = time.monotonic() + 10
        while not is_zombie(process.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert is_zombie(process.pid) and not runs(process.pid)  # killed, its parent has not waited yet
    finally:
        process.kill()
        process.wait()
    assert not runs(process.pid)  # reaped: gone
