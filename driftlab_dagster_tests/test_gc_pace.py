"""The collector's pace is set by the processes that run the study, and only by them."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from driftlab_dagster import gc_pace
from driftlab_dagster.cli import main
from driftlab_dagster.project import DEFAULT_WORLD, PROJECT_ROOT

pytestmark = pytest.mark.system

PACED = (gc_pace.YOUNG_EVERY, gc_pace.MIDDLE_EVERY, gc_pace.OLD_EVERY)


def _thresholds_after(code: str) -> tuple[int, ...]:
    out = subprocess.run([sys.executable, "-c", f"{code}\nimport gc; print(*gc.get_threshold())"], cwd=PROJECT_ROOT,
                         capture_output=True, text=True, check=True).stdout
    return tuple(int(n) for n in out.split())


def test_the_code_location_dagster_loads_paces_its_process():
    # A code server or run worker imports this module before it parses a world.
    assert _thresholds_after("import driftlab_dagster.definitions") == PACED


def test_importing_the_package_leaves_a_host_process_alone():
    untouched = _thresholds_after("pass")
    assert untouched != PACED
    assert _thresholds_after("import driftlab_dagster.defs, driftlab_dagster.headless") == untouched


def _frozen_at_exit(code: str) -> bool:
    """Whether the heap is frozen when the process's last exit handler runs (handlers run last-registered
    first, so one registered before `code` sees what every later one did)."""
    probe = "import atexit, gc\natexit.register(lambda: print(gc.get_freeze_count() > 0))\n"
    out = subprocess.run([sys.executable, "-c", probe + code], cwd=PROJECT_ROOT, capture_output=True, text=True,
                         check=True).stdout
    return out.split()[-1] == "True"


def test_a_paced_process_skips_the_sweeps_at_exit():
    assert _frozen_at_exit("from driftlab_dagster.gc_pace import pace_for_batch\npace_for_batch()\npace_for_batch()")
    assert _frozen_at_exit("import driftlab_dagster.definitions")
    assert not _frozen_at_exit("import driftlab_dagster.defs, driftlab_dagster.headless")


def test_the_command_paces_its_process():
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        assert main(["check-world", str(DEFAULT_WORLD)]) == 0
        assert gc.get_threshold() == PACED
    finally:
        gc.set_threshold(*before)
