"""What the reading makes of any markdown handbook, before a model or a question: a survey of its units.

    PYTHONPATH=. .venv/bin/python bench/reading_survey.py REPO [--rev HEAD] [--prefix content/] [--show 3]

Reads every `*.md` file of a git repository at one revision (core/units.py, as a corpus world reads a page)
and counts the units that show a reading rule failing on real text: markup left in a statement or a heading
trail (HTML tags, markdown link syntax, template tags, emphasis), the page title twice in a trail (its markup
kept once), a statement cut to a fragment ("Q.", "e.g."), a statement longer than 800 characters (a table or
a block read as one line). No question and no model is needed, so any public handbook can be surveyed; the
reading rules are about handbooks in general, and a count that is not near zero on a new handbook names the
next rule to write. `--show N` prints N examples of each.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

from driftlab_dagster.core.units import Unit, markdown_units, page_title


def _plain(heading: str) -> str:
    """A heading without its markdown: emphasis, link syntax, an anchor."""
    return re.sub(r"[*_`]|\[|\]\([^)]*\)|\s*\{#[^}]*\}", "", heading).strip()


CHECKS: dict[str, Callable[[Unit], bool]] = {
    "HTML left in a statement": lambda u: bool(re.search(r"</?[a-zA-Z][^>]*>|<!--", u.text)),
    "markdown link syntax left": lambda u: bool(re.search(r"\]\(|\[\[|\]\]", u.text)),
    "template tag left": lambda u: bool(re.search(r"\{\{|\{%|%\}|\}\}", u.text)),
    "markup in the heading trail": lambda u: any(re.search(r"\*\*|</?[a-zA-Z][^>]*>|\]\(|\{#", h) for h in u.trail),
    "the title twice in the trail (once with its markup)": lambda u: (
        len(u.trail) > 1 and _plain(u.trail[0]) != u.trail[0]
        and _plain(u.trail[0]).casefold() == u.trail[1].casefold()),
    "a fragment (an abbreviation or a FAQ marker)": lambda u: bool(
        re.fullmatch(r"(?:[A-Za-z]\.){1,3}|Q[.:]?|A[.:]?|e\.g\.|i\.e\.", u.text)),
    "a statement over 800 characters": lambda u: len(u.text) > 800,
}


def pages(repo: Path, rev: str, prefix: str) -> Iterator[tuple[str, str]]:
    listing = subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "--name-only", rev],
                             capture_output=True, text=True, check=True).stdout.splitlines()
    for path in listing:
        if path.endswith(".md") and path.startswith(prefix):
            shown = subprocess.run(["git", "-C", str(repo), "show", f"{rev}:{path}"], capture_output=True, check=True)
            yield path, shown.stdout.decode("utf-8", "replace")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--rev", default="HEAD")
    parser.add_argument("--prefix", default="", help="only files under this folder")
    parser.add_argument("--show", type=int, default=0, help="examples to print per count")
    args = parser.parse_args()
    counts: Counter[str] = Counter()
    examples: dict[str, list[str]] = defaultdict(list)
    files = units = 0
    started = time.perf_counter()
    for path, text in pages(args.repo, args.rev, args.prefix):
        files += 1
        for unit in markdown_units(text, page_title(path, text)):
            units += 1
            for name, check in CHECKS.items():
                if check(unit):
                    counts[name] += 1
                    if len(examples[name]) < args.show:
                        examples[name].append(f"{path}: {unit.render()[:200]!r}")
    print(f"{args.repo} at {args.rev}: {files} pages, {units} units, read in {time.perf_counter() - started:.1f} s")
    for name in CHECKS:
        print(f"  {counts[name]:6d}  {name}")
        for line in examples[name]:
            print(f"          {line}")


if __name__ == "__main__":
    main()
