"""Parsed worlds kept on disk, so a large world file is parsed once, not by every process that loads it.

At 40,000 pages a world file is 8 MB of YAML and takes ~21 s to parse and validate; reading the parsed world
back takes ~1.3 s. Every process that runs the study loads its worlds (`driftlab run`, the UI's code server,
each run worker, a one-partition click), so without this the parse dominates a one-event patch.

One entry is the pickled `World` for one (file text, path, parser code) triple: the key hashes the text, the
path it was read from (the world remembers it) and the source of this package's `core` modules with the
Python, pydantic and PyYAML versions, so an edited world or an upgraded parser never reads a stale entry.
Only plain world files of at least `CACHE_FROM_BYTES` are kept (small ones parse in milliseconds; corpus
worlds also depend on their repository, which the key does not cover).

The folder is `$DRIFTLAB_WORLD_CACHE`, else `~/.cache/driftlab/worlds`; `DRIFTLAB_WORLD_CACHE=off` turns it
off. Entries are pickles: the folder is trusted like the code itself (it is the user's own cache). A cache
that cannot be read or written is skipped, never an error: the world is parsed as if it were not there.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TypeVar, cast

CACHE_FROM_BYTES = 1_000_000
KEEP_ENTRIES = 8  # the newest entries kept; older ones are removed when a new one is written


def cache_folder() -> Path | None:
    configured = os.environ.get("DRIFTLAB_WORLD_CACHE")
    if configured is not None and configured.strip().lower() in ("", "off", "0", "false", "no"):
        return None
    return Path(configured) if configured else Path.home() / ".cache" / "driftlab" / "worlds"


@cache
def _code_fingerprint() -> str:
    import pydantic
    import yaml

    digest = hashlib.sha256(f"{sys.version}\0{pydantic.VERSION}\0{yaml.__version__}".encode())
    core = Path(__file__).resolve().parent
    for module in sorted(core.rglob("*.py")):
        digest.update(str(module.relative_to(core)).encode() + b"\0" + module.read_bytes())
    return digest.hexdigest()


def entry_path(text: str, source: str) -> Path | None:
    """Where the parsed world for this text read from this path is kept; None when it is not cached."""
    folder = cache_folder()
    if folder is None or len(text) < CACHE_FROM_BYTES:
        return None
    key = hashlib.sha256(f"{_code_fingerprint()}\0{source}\0".encode() + text.encode()).hexdigest()
    return folder / f"{key}.pickle"


T = TypeVar("T")


def cached_parse(text: str, source: str, parse: Callable[[str, str], T], kind: type) -> T:
    """`parse(text, source)`, or its result from the cache; only results of exactly `kind` are stored."""
    entry = entry_path(text, source)
    if entry is None:
        return parse(text, source)
    try:
        with entry.open("rb") as f:
            found = pickle.load(f)
        if type(found) is kind:
            return cast(T, found)  # only what `parse` returned was stored, and it is of exactly `kind`
    except Exception:  # missing, truncated, from an older layout: parse again and replace it
        pass
    parsed = parse(text, source)
    if type(parsed) is kind:
        _store(entry, parsed)
    return parsed


def _store(entry: Path, parsed: object) -> None:
    temporary: Path | None = None
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("wb", dir=entry.parent, suffix=".tmp", delete=False) as f:
            temporary = Path(f.name)
            pickle.dump(parsed, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, entry)  # atomic: a concurrent reader sees no entry or the whole new one
        entries = sorted(entry.parent.glob("*.pickle"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in entries[KEEP_ENTRIES:]:
            old.unlink(missing_ok=True)
    except OSError:  # a read-only or full disk, a concurrent prune: the next load parses again
        if temporary is not None:
            temporary.unlink(missing_ok=True)
