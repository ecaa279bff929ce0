"""What the kernel says about a process, read from /proc: whether it still runs and when it started.

Linux only (the standard library has no portable way); elsewhere the stat fields are empty, the start time
"" and no process a zombie, so callers decide by the pid alone (`runs` asks it with a signal). Kept free of dagster, so
the PostgreSQL helper and the headless runner share it without the one importing the other's world.
"""

from __future__ import annotations

import os
from pathlib import Path


def stat_fields(pid: int) -> list[str]:
    """/proc/<pid>/stat after the command name (which may hold spaces and parentheses): the state is
    field 0, the start time field 19. An empty list elsewhere, or for a pid that is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def process_start(pid: int) -> str:
    """The kernel's start time of a process (clock ticks since boot): a pid reused later has another; ""
    when it cannot be read."""
    fields = stat_fields(pid)
    return fields[19] if len(fields) > 19 else ""


def is_zombie(pid: int) -> bool:
    """A process killed (kill -9) but not yet reaped by its parent still answers kill(pid, 0): its state
    Z (zombie) or X (dead) says it runs nothing and holds nothing."""
    fields = stat_fields(pid)
    return bool(fields) and fields[0] in ("Z", "X")


def runs(pid: int) -> bool:
    """Whether the process exists and is not a zombie (a server we started and stopped, not yet reaped);
    without /proc, whether the pid answers a signal."""
    fields = stat_fields(pid)
    if fields or Path("/proc/self/stat").exists():
        return bool(fields) and fields[0] not in ("Z", "X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it runs
        return True
    return True
