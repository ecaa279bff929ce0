"""Larger worlds from a templated one, for measuring what the study costs as a corpus grows.

`scale_world(world, copies=N, seed=S)` keeps the source world whole (its pages, events, questions and
scenarios, so the accuracy numbers stay comparable) and adds N - 1 sister companies: every page again, as
it stood before the first event, with every name the pages state facts about renamed for that copy. A copy
states the same kinds of facts about its own plans, teams and products, in the same sentences, and never
changes: most of a real wiki is pages nobody touches this week. So an event changes as many pages in a
scaled world as in the source, while the corpus, the graph and the retrieval index grow N-fold: exactly
the shape in which "patch the changed pages" should stay flat and "rebuild everything" should grow.

Nothing here knows Tessaly: which strings are names comes from the world's own facts, and a renamed name
is kept only where it still matches the shape its predicate declares (numbers are never renamed).
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Callable
from typing import Any

import yaml

from .world import World
from .world.templated import TemplatedWorld
from .world.templated_spec import MAX_PAGES, ConditionalPart, FactPart, WorldSpec
from .world.yaml_guard import MAX_YAML_NODES

_LETTERS = string.ascii_lowercase


class CannotScale(ValueError):
    """The source cannot be scaled this way (said in one line)."""


def not_templated(world: World) -> CannotScale:
    """The refusal of a world that is not a templated one."""
    return CannotScale(f"{world.source}: only a templated world can be scaled; a corpus world's pages come from "
                       "its revision history (scale the history itself, or generate from a templated world)")


def _suffixes(copies: int, seed: int, taken: set[str]) -> list[str]:
    """One distinct lower-case suffix per copy (copy 0, the source, gets none), drawn with `seed`."""
    rng = random.Random(seed)
    width = 3
    while len(_LETTERS) ** width < 4 * copies:
        width += 1
    chosen: list[str] = [""]
    seen: set[str] = set()
    while len(chosen) < copies:
        suffix = "".join(rng.choice(_LETTERS) for _ in range(width))
        if suffix not in seen and not any(suffix in t.casefold() for t in taken):
            seen.add(suffix)
            chosen.append(suffix)
    return chosen


def _initial_parts(world: TemplatedWorld, parts: list[Any]) -> list[Any]:
    """A page body as it reads before any event: conditions resolved against the initial state,
    placeholders filled; facts stay facts (subject, object filled)."""
    state = world.spec.state
    out: list[Any] = []
    for part in parts:
        if isinstance(part, str):
            out.append(world.fill(part, state))
        elif isinstance(part, FactPart):
            predicate, subject, obj = part.fact
            out.append((predicate, world.fill(subject, state), world.fill(obj, state)))
        elif isinstance(part, ConditionalPart):
            if part.when is not None:
                holds = all(str(state[k]) == str(v) for k, v in part.when.items())
            else:
                holds = False  # nothing has changed before the first event
            out.extend(_initial_parts(world, part.then if holds else part.otherwise))
    return out


def _names(world: TemplatedWorld, pages: list[list[Any]]) -> list[tuple[str, str]]:
    """(name, shape pattern) for every entity the pages state facts about (the subjects), once each, with
    the shape of the slot it takes. Values that are never a subject (numbers, people, descriptions) are not
    names of the company's things and stay as they are."""
    subjects: dict[str, str] = {}
    for parts in pages:
        for part in parts:
            if isinstance(part, tuple):
                spec = world.spec.predicates[part[0]]
                if spec.subject is not None:
                    subjects.setdefault(part[1], world.spec.shapes[spec.subject])
    return sorted(subjects.items())


def _renamer(names: list[tuple[str, str]], suffix: str) -> tuple[dict[str, str], Callable[[str], str]]:
    """A function renaming, in one pass over a text, every name whose suffixed form keeps its shape."""
    mapping: dict[str, str] = {}
    for name, shape in names:
        renamed = name + suffix
        if any(ch.isalpha() for ch in name) and re.fullmatch(shape, renamed):
            mapping[name] = renamed
    if not mapping:
        return mapping, lambda text: text
    # Longest first, whole words only: "Pro" is renamed in "the Pro plan", never inside "Product".
    pattern = re.compile(r"(?<!\w)(" + "|".join(re.escape(n) for n in sorted(mapping, key=len, reverse=True))
                         + r")(?!\w)")
    return mapping, lambda text: pattern.sub(lambda m: mapping[m.group(1)], text)


def scale_world(world: TemplatedWorld, copies: int, seed: int = 0) -> dict[str, Any]:
    """The source world plus `copies - 1` renamed, unchanging sister copies of its pages, as the data of a
    world file (a dict that `parse_world` accepts). Deterministic for (world, copies, seed)."""
    if not isinstance(world.spec, WorldSpec) or type(world) is not TemplatedWorld:
        raise not_templated(world)
    if copies < 1:
        raise CannotScale(f"--copies must be at least 1 (1 gives the source world back), not {copies}")
    limit, why = max_copies(world)
    if copies > limit:
        raise CannotScale(f"{copies:,} copies of {len(world.spec.pages)} pages would make a world file with {why}; "
                          f"ask for at most {limit:,} copies")
    return _with_copies(world, copies, seed)


def max_copies(world: TemplatedWorld) -> tuple[int, str]:
    """The most copies a world file may hold, and what too many would break: MAX_PAGES pages, or the
    loader's MAX_YAML_NODES values (a copy's count of values does not depend on its names)."""
    pages = len(world.spec.pages)
    by_pages = MAX_PAGES // pages
    source = _yaml_values(world.spec.model_dump(mode="json", exclude_defaults=False))
    per_copy = _yaml_values(_with_copies(world, 2, 0)["pages"][pages:]) - 1  # less the list around it
    by_values = 1 + (MAX_YAML_NODES - source) // max(per_copy, 1)
    if by_values < by_pages:
        return by_values, (f"more than {MAX_YAML_NODES:,} YAML values (MAX_YAML_NODES; the source holds {source:,}, "
                           f"each copy {per_copy:,})")
    return by_pages, f"more than {MAX_PAGES:,} pages (MAX_PAGES)"


def _yaml_values(data: Any) -> int:
    """How many YAML values `data` is written as, counted as the loader counts them (yaml_guard): every
    scalar, mapping and sequence, mapping keys included."""
    if isinstance(data, dict):
        return 1 + sum(1 + _yaml_values(v) for v in data.values())
    if isinstance(data, list):
        return 1 + sum(_yaml_values(v) for v in data)
    return 1


def _with_copies(world: TemplatedWorld, copies: int, seed: int) -> dict[str, Any]:
    data = world.spec.model_dump(mode="json", exclude_defaults=False)
    if copies == 1:
        return data
    initial = [_initial_parts(world, p.body) for p in world.spec.pages]
    names = _names(world, initial)
    page_ids = {p.id for p in world.spec.pages}
    suffixes = _suffixes(copies, seed, {n for n, _ in names} | page_ids)
    for suffix in suffixes[1:]:
        mapping, rename = _renamer(names, suffix)
        for page, parts in zip(world.spec.pages, initial):
            body: list[Any] = []
            for part in parts:
                if isinstance(part, tuple):
                    predicate, subject, obj = part
                    if world.spec.predicates[predicate].fixed_subject is not None:
                        continue  # "the refund window is 30 days" is about the source company: not a sister's
                    body.append({"fact": [predicate, mapping.get(subject, subject), mapping.get(obj, obj)]})
                else:
                    body.append(rename(part))
            copy_id = f"{page.id}~{suffix}"
            if copy_id in page_ids:
                raise CannotScale(f"page id {copy_id!r} exists in the source; rename that page or pick another --seed")
            data["pages"].append({"id": copy_id, "title": rename(page.title), "body": body})
    _check_copies(world, data["pages"][len(world.spec.pages):], {n for n, _ in names})
    base = world.id
    data["id"] = f"{base[:40]}_x{copies}"
    return data


def _check_copies(world: TemplatedWorld, pages: list[dict[str, Any]], source_names: set[str]) -> None:
    """A copy must never speak about the source company: no fact about a source name (or a fixed subject)
    may be read from it, and no brace may be read as a placeholder."""
    for page in pages:
        for part in page["body"]:
            if isinstance(part, str):
                if "{" in part:
                    raise CannotScale(f"page {page['id']}: its text contains '{{', which a world file reads as a "
                                      "placeholder; this world cannot be copied as is")
                for triple in world.ontology.parse(part):
                    predicate = world.spec.predicates[triple.predicate]
                    if predicate.fixed_subject is not None or triple.subject in source_names:
                        raise CannotScale(f"page {page['id']}: its text states {triple.predicate} of "
                                          f"{triple.subject!r}, a fact about the source company that a copy would "
                                          "repeat; write that sentence as a `fact:` part so it can be renamed")


def dump_world(data: dict[str, Any]) -> str:
    """A world file's text for `data` (block style; fast with libyaml when present)."""
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    header = ("# Generated by `driftlab generate-world`: the source world and renamed, unchanging sister copies of\n"
              "# its pages. Validate with `driftlab check-world`; run like any world file.\n")
    return header + yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=True, width=1000)

