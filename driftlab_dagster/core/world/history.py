"""Pages from a real revision history: a git repository of markdown, or folders of dated snapshots.

A checkpoint's pages are the files as they stood at the start of that date (UTC): the tree of the last
commit before it. A page's id is its path, its title its first `# heading` (else its file name), its
`updated_at` the time of the last commit that changed it. A file git records as renamed is the same page
under a new id; a file that disappears is a deleted page.

Plain `git` through subprocess, a handful of calls per world (one log, one tree listing and one batched
read per checkpoint), so a handbook with years of history loads in seconds.
"""

from __future__ import annotations

import datetime as dt
import re
import subprocess
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Literal

from ..units import page_title

MAX_PAGE_BYTES = 256 * 1024  # a page longer than this is skipped with a note, not read (as for templated pages)


class CorpusError(ValueError):
    """The corpus cannot be read; one line, for the person who wrote the world file."""


@dataclass(frozen=True)
class CorpusPage:
    """One page as it stood at one checkpoint."""

    id: str  # the path
    title: str
    body: str
    updated_at: dt.datetime  # naive UTC: when its text last changed


@dataclass
class Snapshot:
    """A checkpoint: its day, its pages by id, and the renames since the previous checkpoint (old -> new)."""

    day: dt.date
    pages: dict[str, CorpusPage]
    renames: dict[str, str] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------------------
# Globs with ** over paths ("handbook/**/*.md" also matches "handbook/a.md").


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def glob_match(path: str, pattern: str) -> bool:
    return _glob_regex(pattern).match(path) is not None


def _page(path: str, raw: bytes, updated_at: dt.datetime) -> CorpusPage | None:
    if len(raw) > MAX_PAGE_BYTES:
        return None
    text = raw.decode("utf-8", errors="replace").replace("\r\n", "\n")
    return CorpusPage(path, page_title(path, text), text.strip(), updated_at)


def _utc(stamp: str) -> dt.datetime:
    return dt.datetime.fromisoformat(stamp).astimezone(dt.UTC).replace(tzinfo=None)


# ---------------------------------------------------------------------------------------------------------
# git


def _git(repo: Path, *args: str, input_bytes: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], input=input_bytes, capture_output=True, timeout=600)
    except FileNotFoundError:
        raise CorpusError("git is not installed: install it, or use snapshot folders (corpus.snapshots)") from None
    if done.returncode != 0:
        raise CorpusError(f"git {args[0]} failed in {repo}: {done.stderr.decode(errors='replace').strip()[:200]}")
    return done.stdout


@dataclass(frozen=True)
class _Change:
    status: str  # A, M, D or R
    path: str
    old: str | None = None  # the path before a rename


def load_git(repo: Path, paths: list[str], checkpoints: list[dt.date] | Literal["commits"]) -> list[Snapshot]:
    """The snapshots at each checkpoint date, or at each day with a commit touching the pages ("commits")."""
    if not repo.exists():
        raise CorpusError(f"the repository {repo} does not exist")
    if subprocess.run(["git", "-C", str(repo), "rev-parse", "--git-dir"], capture_output=True).returncode != 0:
        raise CorpusError(f"{repo} is not a git repository")
    history = _history(repo, paths)
    if not history:
        raise CorpusError(f"no commit in {repo} touches {', '.join(paths)}")
    if checkpoints == "commits":
        by_day: dict[dt.date, str] = {}
        for sha, when, _ in history:
            by_day[when.date()] = sha  # the last commit of each day
        targets = [(day, sha) for day, sha in sorted(by_day.items())]
    else:
        first = history[0][1]
        targets = []
        for day in checkpoints:
            start = dt.datetime.combine(day, dt.time())
            before = [sha for sha, when, _ in history if when < start]
            if not before:
                raise CorpusError(f"checkpoint {day} is before the first commit touching the pages ({first:%Y-%m-%d}); "
                                  "move it later or drop it")
            targets.append((day, before[-1]))
    return _replay(repo, paths, history, targets)


def _history(repo: Path, paths: list[str]) -> list[tuple[str, dt.datetime, list[_Change]]]:
    """Every commit of the branch's first-parent line that touched a page, oldest first, with its file
    changes against its first parent (renames detected). A branch's history is its first-parent line: a
    pull request's own commits reach the branch when it is merged, at the merge's time, never before."""
    specs = [f":(glob){p}" for p in paths]
    raw = _git(repo, "log", "--reverse", "--first-parent", "--diff-merges=first-parent", "-M", "--name-status",
               "--format=%x00%H%x09%cI", "--", *specs).decode("utf-8", errors="replace")
    history = []
    for block in raw.split("\x00")[1:]:
        lines = [line for line in block.splitlines() if line.strip()]
        sha, stamp = lines[0].split("\t")
        changes = []
        for line in lines[1:]:
            parts = line.split("\t")
            status = parts[0][0]
            if status == "R" and len(parts) == 3:
                changes.append(_Change("R", parts[2], parts[1]))
            elif status in "AMDT" and len(parts) >= 2:
                changes.append(_Change("M" if status == "T" else status, parts[-1]))
        history.append((sha, _utc(stamp), changes))
    return history


def _replay(repo: Path, paths: list[str], history: list[tuple[str, dt.datetime, list[_Change]]],
            targets: list[tuple[dt.date, str]]) -> list[Snapshot]:
    """Walk the history once: the files each checkpoint has, when each last changed, and the renames."""
    wanted = {sha for _, sha in targets}
    present: dict[str, dt.datetime] = {}  # path -> when its text last changed
    renamed: dict[str, str] = {}  # since the last checkpoint: original path -> current path
    at_commit: dict[str, tuple[dict[str, dt.datetime], dict[str, str]]] = {}
    for sha, when, changes in history:
        for change in changes:
            if not any(glob_match(change.path, p) for p in paths) and change.status != "D":
                if change.status == "R" and change.old in present:  # moved out of the pages: a deletion
                    present.pop(change.old)
                continue
            if change.status == "D":
                present.pop(change.path, None)
            elif change.status == "R" and change.old is not None:
                before = present.pop(change.old, when)
                present[change.path] = when if change.path not in present else before
                origin = next((o for o, cur in renamed.items() if cur == change.old), change.old)
                renamed[origin] = change.path
            else:
                present[change.path] = when
        if sha in wanted:
            at_commit[sha] = (dict(present), dict(renamed))
            renamed.clear()
    snapshots = []
    for day, sha in targets:
        files, renames = at_commit[sha]
        contents = _read_blobs(repo, sha, sorted(files))
        pages = {}
        for path in sorted(files):
            page = _page(path, contents.get(path, b""), files[path])
            if page is not None:
                pages[path] = page
        snapshots.append(Snapshot(day, pages, {old: new for old, new in renames.items() if old != new}))
    return snapshots


def _read_blobs(repo: Path, sha: str, paths: list[str]) -> dict[str, bytes]:
    """The files' contents at a commit, in one `git cat-file --batch`."""
    if not paths:
        return {}
    out = _git(repo, "cat-file", "--batch", input_bytes="".join(f"{sha}:{p}\n" for p in paths).encode())
    contents, at = {}, 0
    for path in paths:
        header_end = out.index(b"\n", at)
        header = out[at:header_end].split()
        at = header_end + 1
        if len(header) < 3 or header[1] != b"blob":
            continue
        size = int(header[2])
        contents[path] = out[at:at + size]
        at += size + 1
    return contents


# ---------------------------------------------------------------------------------------------------------
# Snapshot folders: snapshots/<YYYY-MM-DD>/<path>

RENAME_SIMILARITY = 0.5  # git's default for `-M`: a new file at least half like a vanished one is it, moved


def load_snapshots(folder: Path, paths: list[str]) -> list[Snapshot]:
    """One snapshot per dated folder. A page that vanished while a new one at least half like it appeared
    is the same page, moved (git's rule, RENAME_SIMILARITY). A changed page's `updated_at` is its file's
    modification time when that falls after the previous checkpoint and before this one (copies made with
    `cp -p` or `rsync -t` keep it), else this checkpoint's start."""
    if not folder.is_dir():
        raise CorpusError(f"the snapshot folder {folder} does not exist")
    days = []
    for child in sorted(folder.iterdir()):
        try:
            days.append((dt.date.fromisoformat(child.name), child))
        except ValueError:
            continue
    if not days:
        raise CorpusError(f"{folder} has no folder named by a date (YYYY-MM-DD)")
    snapshots: list[Snapshot] = []
    last: dict[str, CorpusPage] = {}
    since: dt.datetime | None = None
    for day, child in days:
        start = dt.datetime.combine(day, dt.time())
        raw: dict[str, tuple[bytes, float]] = {}
        for file in sorted(p for p in child.rglob("*") if p.is_file()):
            path = file.relative_to(child).as_posix()
            if any(glob_match(path, p) for p in paths):
                raw[path] = (file.read_bytes(), file.stat().st_mtime)
        texts = {path: _text(data) for path, (data, _) in raw.items()}
        renames = _similar_moves({p: page.body for p, page in last.items() if p not in texts},
                                 {p: t for p, t in texts.items() if p not in last})
        moved_from = {new: old for old, new in renames.items()}
        pages = {}
        for path, (data, mtime) in raw.items():
            previous = last.get(moved_from.get(path, path))
            if previous is not None and previous.body == texts[path]:
                stamp = previous.updated_at
            else:
                modified = dt.datetime.fromtimestamp(mtime, dt.UTC).replace(tzinfo=None)
                stamp = modified if (since is None or since < modified) and modified <= start else start
            page = _page(path, data, stamp)
            if page is not None:
                pages[path] = page
        snapshots.append(Snapshot(day, pages, renames))
        last, since = pages, start
    return snapshots


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace").replace("\r\n", "\n").strip()


def _similarity(a: str, b: str) -> float:
    """How alike two texts are, as git scores a rename: the lines they share over the longer text's length."""
    if not a or not b:
        return 0.0
    left: dict[str, int] = {}
    for line in a.splitlines(keepends=True):
        left[line] = left.get(line, 0) + 1
    shared = 0
    for line in b.splitlines(keepends=True):
        if left.get(line, 0) > 0:
            left[line] -= 1
            shared += len(line)
    return shared / max(len(a), len(b))


def _similar_moves(gone: dict[str, str], new: dict[str, str]) -> dict[str, str]:
    """old path -> new path for vanished pages that reappear elsewhere, the most alike pairs first."""
    pairs = sorted(((_similarity(old_text, new_text), old, path) for old, old_text in gone.items()
                    for path, new_text in new.items()), key=lambda x: (-x[0], x[1], x[2]))
    moves: dict[str, str] = {}
    for score, old, path in pairs:
        if score >= RENAME_SIMILARITY and old not in moves and path not in moves.values():
            moves[old] = path
    return moves
