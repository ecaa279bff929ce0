"""Opening the study's DuckDB file: refusing, in one line, a path or a file that cannot be one, waiting out
another process's lock, and a full disk said as such. What the file holds is warehouse.py's."""

from __future__ import annotations

import errno
import re
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from .errors import UserError

_LOCK_HOLDER = re.compile(r"Conflicting lock is held in (.+?) \(PID (\d+)\)")


class WarehouseError(UserError, RuntimeError):
    """The DuckDB file cannot be used. The message is one line that says what to do."""


def check_database_path(database: str) -> None:
    if database == ":memory:":
        return
    parent = Path(database).expanduser().resolve().parent
    if not parent.is_dir():
        raise WarehouseError(
            f"DuckDB directory {parent} does not exist: create it (mkdir -p {parent}) or point --database / "
            "the warehouse resource's `database` at a file in an existing directory"
        )


# DuckDB fetches and loads extensions on its own when a file or a query needs one (a SQLite file needs
# `sqlite`): the study needs none, so nothing is downloaded or loaded behind the user's back.
NO_EXTENSIONS: dict[str, Any] = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}

# How every DriftLab connection opens a file: no extensions (above), and one thread. The study sends thousands
# of small queries (a slice's ids, a day's changed rows, a check), where DuckDB's parallel operators (a thread
# per core by default) cost more CPU than they save wall time: at 40,000 pages one thread took 0.96 of the
# default's CPU and 0.97 of its wall time, rows identical (BENCHMARKS). A caller's `config` may ask for more.
STUDY_CONNECTION: dict[str, Any] = {**NO_EXTENSIONS, "threads": 1}

# A DuckDB file's main header: an 8-byte checksum, then the magic bytes.
_DUCKDB_MAGIC, _DUCKDB_MAGIC_AT = b"DUCK", 8
_OTHER_FILES = [(b"SQLite format 3\x00", "a SQLite database"), (b"PAR1", "a Parquet file"),
                (b"PK\x03\x04", "a zip archive"), (b"\x1f\x8b", "a gzip file"), (b"%PDF", "a PDF file")]


def check_database_file(database: str) -> None:
    """Refuse, in one line that says what the file is, an existing file that is not a DuckDB database:
    DuckDB would try to read a SQLite file through an extension (downloading it), or call any other file
    "not a valid DuckDB database" without saying what it is."""
    path = Path(database).expanduser()
    if database == ":memory:" or not path.is_file():
        return
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError:
        return  # unreadable: DuckDB's own error says so (connect turns it into one line)
    if head[_DUCKDB_MAGIC_AT:_DUCKDB_MAGIC_AT + len(_DUCKDB_MAGIC)] == _DUCKDB_MAGIC:
        return
    text = head.decode("utf-8", errors="replace")  # a character cut at byte 64 is one U+FFFD at the end
    is_text = "\ufffd" not in text[:-1] and all(c.isprintable() or c.isspace() for c in text)
    what = next((name for magic, name in _OTHER_FILES if head.startswith(magic)), None) or (
        "an empty file" if not head else "a text file" if is_text else "another kind of file")
    raise WarehouseError(f"{database} is {what}, not a DuckDB database: point --database at a DuckDB file, or at a "
                         "path that does not exist yet (DriftLab creates it)")


def connect(database: str, lock_timeout_seconds: float = 10.0, config: Mapping[str, Any] | None = None,
            read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the file, waiting up to `lock_timeout_seconds` for another process to let go of it."""
    check_database_path(database)
    check_database_file(database)
    deadline = time.monotonic() + lock_timeout_seconds
    delay = 0.05
    while True:
        try:
            return duckdb.connect(database, read_only=read_only, config={**STUDY_CONNECTION, **(config or {})})
        except duckdb.IOException as e:
            holder = _LOCK_HOLDER.search(str(e))
            if holder is None:
                raise WarehouseError(f"cannot open DuckDB file {database}: {str(e).splitlines()[0]}") from None
            if time.monotonic() >= deadline:
                raise WarehouseError(
                    f"DuckDB file {database} is locked by another process (PID {holder.group(2)}, "
                    f"{Path(holder.group(1)).name}) and stayed locked for {lock_timeout_seconds:g}s: close it "
                    "(a DuckDB shell, a notebook, another run) and retry; nothing was written"
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 1.0)


def is_disk_full(error: BaseException) -> bool:
    """Whether `error`, or an error it was raised while handling, is the disk running out of space (DuckDB
    reports it as an IO or Transaction error whose text carries the OS's "No space left on device")."""
    seen: BaseException | None = error
    for _ in range(8):  # a chain of a few errors at most; never loop on a cycle
        if seen is None:
            return False
        if isinstance(seen, OSError) and seen.errno == errno.ENOSPC:
            return True
        text = str(seen)
        if "No space left on device" in text or "Errno 28" in text or "errno 28" in text:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


@contextmanager
def disk_full_in_one_line(database: str) -> Iterator[None]:
    """Around everything that writes the file: a full disk becomes one line naming the file. DuckDB
    rolls the failed transaction back, so partitions already written are kept and a rerun continues."""
    try:
        yield
    except duckdb.Error as e:
        if not is_disk_full(e):
            raise
        raise WarehouseError(f"DuckDB file {database}: the disk is full (No space left on device): free space on "
                             "that disk, or point --database at a file on another one, and run again; partitions "
                             "already written are kept") from None
