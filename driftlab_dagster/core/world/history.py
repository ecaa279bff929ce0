"""Pages from a real revision history: a git repository of markdown, or folders of dated snapshots.

A checkpoint's pages are the files as they stood at the start of that date (UTC): the tree of the last
commit before it. A page's id is its path, its title its first `# heading` (else its file name), its
`updated_at` the time of the last commit that changed it. A file git records as renamed is the same page
under a new id; a file that disappears is a deleted page.

Plain `git` through subprocess, a handful of calls per world (one log, one tree listing and one batched
read per checkpoint), so a handbook with years of history loads in seconds.

What is read with a caveat, or not at all, is said in a note (one line each, `check-world` prints them): a
file over MAX_PAGE_BYTES (skipped), a file that is not UTF-8 (read with replacement characters), a name in
the snapshots folder that is not a date (ignored).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import subprocess
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Literal

from ..units import page_title

MAX_PAGE_BYTES = 256 * 1024  # a page longer than this is skipped with a note, not read (as for templated pages)
_DATE_SHAPED = re.compile(r"\d{4}-?\d{1,2}-?\d{1,2}")  # a snapshot folder's name meant as a date


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
    # Files over MAX_PAGE_BYTES, never read: path -> their size and sha256, so the world's version follows them.
    skipped: dict[str, str] = field(default_factory=dict)


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


class _Reader:
    """Files into pages, noting what is not read as it is, once per version of a file (a file that stays
    the same over ten checkpoints is one note, on the first of them)."""

    def __init__(self, notes: list[str]):
        self.notes = notes
        self._noted: set[tuple[str, str]] = set()

    def _note(self, path: str, digest: str, note: str) -> None:
        if (path, digest) not in self._noted:
            self._noted.add((path, digest))
            self.notes.append(note)

    def skip(self, snapshot: Snapshot, path: str, size: int, digest: str) -> None:
        """A file over MAX_PAGE_BYTES: not a page, but part of what the world is made of (its version)."""
        snapshot.skipped[path] = f"{size}:{digest}"
        self._note(path, digest, f"{path} on {snapshot.day}: skipped, {size:,} bytes over the {MAX_PAGE_BYTES:,}-byte "
                                 "limit")

    def page(self, snapshot: Snapshot, path: str, raw: bytes, updated_at: dt.datetime) -> None:
        """The file as a page of `snapshot`, or skipped when it is too big."""
        if len(raw) > MAX_PAGE_BYTES:
            self.skip(snapshot, path, len(raw), hashlib.sha256(raw).hexdigest())
            return
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            # Still read (a stray Latin-1 byte spoils one word, not the page), but the person should know.
            line = raw.count(b"\n", 0, e.start) + 1
            self._note(path, hashlib.sha256(raw).hexdigest(),
                       f"{path} on {snapshot.day}: not UTF-8 at line {line} (byte 0x{raw[e.start]:02x}), read with "
                       "replacement characters; save it as UTF-8")
            text = raw.decode("utf-8", errors="replace")
        text = text.replace("\r\n", "\n")
        snapshot.pages[path] = CorpusPage(path, page_title(path, text), text.strip(), updated_at)


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


def load_git(repo: Path, paths: list[str], checkpoints: list[dt.date] | Literal["commits"],
             notes: list[str] | None = None) -> list[Snapshot]:
    """The snapshots at each checkpoint date, or at each day with a commit touching the pages ("commits").
    What is read with a caveat, or skipped, is appended to `notes`, one line each."""
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
    return _replay(repo, paths, history, targets, _Reader([] if notes is None else notes))


def _history(repo: Path, paths: list[str]) -> list[tuple[str, dt.datetime, list[_Change]]]:
    """Every commit of the branch's first-parent line that touched a page, oldest first, with its file
    changes against its first parent (renames detected). A branch's history is its first-parent line: a
    pull request's own commits reach the branch when it is merged, at the merge's time, never before."""
    specs = [f":(glob){p}" for p in paths]
    # -z: paths exactly as they are, never quoted ("wiki/caf\303\251.md" is how git would print "wiki/café.md").
    raw = _git(repo, "log", "--reverse", "--first-parent", "--diff-merges=first-parent", "-M", "--name-status", "-z",
               "--format=%x01%H%x09%cI", "--", *specs).decode("utf-8", errors="replace")
    history = []
    for block in raw.split("\x01")[1:]:
        header, _, rest = block.partition("\x00")
        sha, stamp = header.strip().split("\t")
        fields = rest.lstrip("\n").split("\x00")
        changes, i = [], 0
        while i < len(fields) and fields[i]:
            status = fields[i].strip()[:1]
            if status in "RC" and i + 2 < len(fields):  # a rename (or a copy): its score, the old path, the new
                if status == "R":
                    changes.append(_Change("R", fields[i + 2], fields[i + 1]))
                else:
                    changes.append(_Change("A", fields[i + 2]))
                i += 3
                continue
            if status in "AMDT" and i + 1 < len(fields):
                changes.append(_Change("M" if status == "T" else status, fields[i + 1]))
            i += 2
        history.append((sha, _utc(stamp), changes))
    return history


def _replay(repo: Path, paths: list[str], history: list[tuple[str, dt.datetime, list[_Change]]],
            targets: list[tuple[dt.date, str]], reader: _Reader) -> list[Snapshot]:
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
        snapshot = Snapshot(day, {}, {old: new for old, new in renames.items() if old != new})
        for path in sorted(files):
            reader.page(snapshot, path, contents.get(path, b""), files[path])
        snapshots.append(snapshot)
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


def load_snapshots(folder: Path, paths: list[str], notes: list[str] | None = None) -> list[Snapshot]:
    """One snapshot per dated folder. A page that vanished while a new one at least half like it appeared
    is the same page, moved (git's rule, RENAME_SIMILARITY). A changed page's `updated_at` is its file's
    modification time when that falls after the previous checkpoint and before this one (copies made with
    `cp -p` or `rsync -t` keep it), else this checkpoint's start. What is ignored, read with a caveat or
    skipped is appended to `notes`, one line each."""
    if not folder.is_dir():
        raise CorpusError(f"the snapshot folder {folder} does not exist")
    reader = _Reader([] if notes is None else notes)
    days = []
    for child in sorted(folder.iterdir()):
        if child.name.startswith("."):
            continue  # .git, .DS_Store: a tool's, never meant as a snapshot
        day = _snapshot_day(child)
        if day is None or not child.is_dir():
            reader.notes.append(f"{child}: not a folder named by a date (YYYY-MM-DD), so not a checkpoint: ignored")
            continue
        days.append((day, child))
    if not days:
        raise CorpusError(f"{folder} has no folder named by a date (YYYY-MM-DD)")
    snapshots: list[Snapshot] = []
    last: dict[str, CorpusPage] = {}
    since: dt.datetime | None = None
    for day, child in days:
        start = dt.datetime.combine(day, dt.time())
        snapshot = Snapshot(day, {})
        raw: dict[str, tuple[bytes, float]] = {}
        for file in sorted(p for p in child.rglob("*") if p.is_file()):
            path = file.relative_to(child).as_posix()
            if any(glob_match(path, p) for p in paths):
                info = file.stat()
                if info.st_size > MAX_PAGE_BYTES:  # hashed as it streams: never held whole in memory
                    with file.open("rb") as f:
                        reader.skip(snapshot, path, info.st_size, hashlib.file_digest(f, "sha256").hexdigest())
                else:
                    raw[path] = (file.read_bytes(), info.st_mtime)
        texts = {path: _text(data) for path, (data, _) in raw.items()}
        snapshot.renames = _similar_moves({p: page.body for p, page in last.items() if p not in texts},
                                          {p: t for p, t in texts.items() if p not in last})
        moved_from = {new: old for old, new in snapshot.renames.items()}
        for path, (data, mtime) in raw.items():
            previous = last.get(moved_from.get(path, path))
            if previous is not None and previous.body == texts[path]:
                stamp = previous.updated_at
            else:
                modified = dt.datetime.fromtimestamp(mtime, dt.UTC).replace(tzinfo=None)
                stamp = modified if (since is None or since < modified) and modified <= start else start
            reader.page(snapshot, path, data, stamp)
        snapshots.append(snapshot)
        last, since = snapshot.pages, start
    return snapshots


def _snapshot_day(child: Path) -> dt.date | None:
    """The day a snapshot folder's name says, None for a name not meant as a date ("drafts"). A name meant
    as one that is no real date ("2022-13-45", "2022-3-1") is refused: ignoring it would drop a checkpoint."""
    if not _DATE_SHAPED.fullmatch(child.name):
        return None
    try:
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", child.name):
            raise ValueError("the month and the day take two digits each, with dashes")
        return dt.date.fromisoformat(child.name)
    except ValueError as e:
        raise CorpusError(f"the snapshot folder {child} is not named by a real date ({e}); rename it to the day "
                          "the snapshot was taken, as YYYY-MM-DD (e.g. 2022-03-01)") from None


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
