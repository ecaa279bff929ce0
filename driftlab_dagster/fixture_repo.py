"""Build a git repository from a folder of commit folders, for fixtures kept as data (data/fixtures/).

A commits folder holds one folder per commit, applied in name order (`01-start-the-handbook`, ...). Each
commit folder holds `commit.yaml`:

    message: "Refund window: 30 days becomes 45"   # the commit message
    date: "2021-09-14T09:05:00 +0000"              # author and committer date, as git reads it (quoted,
                                                   # or YAML turns it into a timestamp)
    move: [{from: old/path.md, to: new/path.md}]   # optional: `git mv`, before the files are written
    delete: [some/page.md]                         # optional: `git rm`, after the files are written

and, at their repository paths, the full text of every file the commit creates or changes. Every commit has
the same author and committer and its own fixed date, so the same folders give the same commit ids.

`build_handbook(root)` builds the Thistlecombe handbook (data/fixtures/thistlecombe/, see its README) into
`root`: `python -m driftlab_dagster.fixture_repo DIR` builds one to look at.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml

from driftlab_dagster.project import DATA_DIR

HANDBOOK_DIR = DATA_DIR / "fixtures" / "thistlecombe"

# The handbook fixture's identity, kept for every fixture: changing it changes every commit id.
AUTHOR_NAME = "Thistlecombe Handbook"
AUTHOR_EMAIL = "handbook@thistlecombe.example"


def _git_env() -> dict[str, str]:
    """The environment for every git call: no user or system configuration, no inherited GIT_* variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0",
               LC_ALL="C", TZ="UTC")
    return env


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run git in `repo` and return its stdout; a failure raises with git's own message."""
    result = subprocess.run(["git", *args], cwd=repo, env=env or _git_env(), capture_output=True, text=True,
                            check=False)
    if result.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout


def commit_folders(commits_dir: Path) -> list[Path]:
    """The commit folders under `commits_dir`, in the order they are applied."""
    return sorted(p for p in Path(commits_dir).iterdir() if p.is_dir())


def _apply(folder: Path, repo: Path) -> dict:
    """Apply one commit folder to the work tree (moves, writes, deletes) and return its commit.yaml."""
    meta = yaml.safe_load((folder / "commit.yaml").read_text(encoding="utf-8"))
    for move in meta.get("move") or []:
        (repo / move["to"]).parent.mkdir(parents=True, exist_ok=True)  # git mv does not create folders
        git(repo, "mv", move["from"], move["to"])
    for source in sorted(p for p in folder.rglob("*") if p.is_file() and p != folder / "commit.yaml"):
        target = repo / source.relative_to(folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())
    for path in meta.get("delete") or []:
        git(repo, "rm", "-q", path)
    return meta


def build_repository(commits_dir: Path, repo: Path) -> list[str]:
    """Create a git repository at `repo` from the commit folders in `commits_dir`; return the commit ids."""
    repo = Path(repo)
    if repo.exists():
        raise FileExistsError(f"{repo} already exists")
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    for key, value in (("user.name", AUTHOR_NAME), ("user.email", AUTHOR_EMAIL), ("commit.gpgsign", "false"),
                       ("core.autocrlf", "false"), ("core.fileMode", "false")):
        git(repo, "config", key, value)
    commits = []
    for folder in commit_folders(commits_dir):
        meta = _apply(folder, repo)
        git(repo, "add", "-A")
        env = {**_git_env(), "GIT_AUTHOR_DATE": meta["date"], "GIT_COMMITTER_DATE": meta["date"]}
        git(repo, "commit", "-q", "--no-verify", "-m", meta["message"], env=env)
        commits.append(git(repo, "rev-parse", "HEAD").strip())
    return commits


@dataclass(frozen=True)
class HandbookRepo:
    """The built handbook fixture: its files, its checkpoints and its commit ids."""
    root: Path
    repo: Path                      # the git repository (work tree at the last commit)
    world: Path                     # root/handbook.yaml
    questions: Path                 # root/handbook_questions.yaml
    checkpoints: tuple[dt.date, ...]
    commits: tuple[str, ...]        # commit ids, oldest first, one per commit folder


def build_handbook(root: Path) -> HandbookRepo:
    """Write the handbook repository at root/repo, the world file and the questions file; return their paths."""
    root = Path(root)
    commits = build_repository(HANDBOOK_DIR / "commits", root / "repo")
    world = shutil.copyfile(HANDBOOK_DIR / "handbook.yaml", root / "handbook.yaml")
    questions = shutil.copyfile(HANDBOOK_DIR / "handbook_questions.yaml", root / "handbook_questions.yaml")
    checkpoints = yaml.safe_load(world.read_text(encoding="utf-8"))["corpus"]["checkpoints"]
    return HandbookRepo(root=root, repo=root / "repo", world=world, questions=questions,
                        checkpoints=tuple(checkpoints), commits=tuple(commits))


if __name__ == "__main__":
    import sys

    built = build_handbook(Path(sys.argv[1]))
    print(built.repo, built.commits[-1])
