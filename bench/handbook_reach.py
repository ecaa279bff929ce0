"""How much of a corpus world's answers any graph could hold, before a model reads a word.

    PYTHONPATH=. .venv/bin/python bench/handbook_reach.py WORLD.yaml [WORLD.yaml ...]

For every question and every checkpoint whose answer is not "none" and that has evidence (a page and a
verbatim quote), it finds the reading unit that holds the quote (core/units.py: a sentence, a list item, a
table row, each with its heading trail) and asks:

- **reach**: does that unit, with its trail, write the question's entity (every content word of it,
  as the governed graph links a question's name: values.names_match), and the unit itself the answer (in
  the one normalisation, core/values.py; grounding takes a value from the unit, never its headings)? Then
  a perfect extractor could turn it into the right fact. The share of dated answers that pass is the
  ceiling of every graph design.
- **routed**: is the question's relation among the relations the unit is asked about
  (grounding.relations_to_ask)? A unit that is never asked about its relation cannot reach the graph.

Prints one line per world and, with --misses, the answers a perfect extractor could not reach and why.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

from driftlab_dagster.core.grounding import relations_to_ask
from driftlab_dagster.core.units import markdown_units
from driftlab_dagster.core.values import names_match, normalise
from driftlab_dagster.core.world import NONE
from driftlab_dagster.core.world.corpus import CorpusWorld
from driftlab_dagster.core.world.loader import load_world


def _words(text: str) -> list[str]:
    """A text's words and numbers, case folded: a quote copied from the markdown source ("**Lead:** Ana",
    "| Marketing | $340,000 |") is found in the unit the reader made of it ("Lead: Ana", "Team: Marketing;
    Budget: $340,000")."""
    return re.findall(r"[\w$€£%.,@-]+", text.casefold().replace("*", " ").replace("|", " "))


def _holds(unit_words: list[str], quote: str) -> bool:
    """Whether a unit holds a quote copied from the markdown source: the quote is read the way the page is
    (links to their text, shortcodes to their arguments), then every word of it must be in the unit."""
    shown = " ".join(u.text for u in markdown_units(quote)) or quote
    wanted = [w.strip(".,") for w in _words(shown)]
    have = {w.strip(".,") for w in unit_words}
    return bool(wanted) and all(w in have for w in wanted if w)


def measure(world: CorpusWorld, show_misses: bool = False) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for q in world.questions_spec:
        for checkpoint, snapshot in zip(world.checkpoints, world.snapshots):
            answer = world._as_of(q.answers, checkpoint.day)
            if answer == NONE:
                continue
            counts["dated answers"] += 1
            dated = [d for d in q.evidence if d <= checkpoint.day]
            if not dated:
                counts["without evidence"] += 1
                continue
            evidence = q.evidence[max(dated)]
            page = snapshot.pages.get(evidence.page)
            if page is None:
                counts["evidence page missing"] += 1
                continue
            units = [u for u in world.text_units(page.body, page.title)
                     if _holds(_words(f"{u.context} {u.text}"), evidence.quote)]
            if not units:
                counts["quote spans units"] += 1
                if show_misses:
                    print(f"  {q.id} {checkpoint.key}: quote spans units: {evidence.quote[:80]!r}")
                continue
            # The evidence states the last hop: its subject is the question's entity on a one-hop question,
            # and on a longer one whatever the earlier hops led to (only the answer is checked then).
            entity = q.entity if isinstance(q.entity, str) else world._as_of(q.entity, checkpoint.day)
            relation = q.hops[-1]
            named = bool(world.ontology[relation].fixed_subject) or len(q.hops) > 1
            spellings = [answer, *next((v for k, v in q.accepted.items() if normalise(k) == normalise(answer)), [])]
            reached = [u for u in units
                       if (named or names_match(world.name_key(entity), world.name_key(f"{u.context} {u.text}")))
                       and any(normalise(s) in normalise(u.text) for s in spellings)]
            if not reached:
                counts["unit lacks entity or answer"] += 1
                if show_misses:
                    print(f"  {q.id} {checkpoint.key}: {entity!r} / {answer!r} not both in {units[0].render()!r}")
                continue
            counts["reach"] += 1
            if any(relation in {p.name for p in relations_to_ask(u.text, world.ontology.predicates, u.own_section)}
                   for u in reached):
                counts["routed"] += 1
    return dict(counts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("worlds", nargs="+", type=Path)
    parser.add_argument("--misses", action="store_true", help="list the answers a perfect extractor cannot reach")
    args = parser.parse_args()
    for path in args.worlds:
        world = load_world(path)
        if not isinstance(world, CorpusWorld):
            raise SystemExit(f"{path}: a corpus world (pages from a revision history) is needed")
        counts = measure(world, args.misses)
        dated = counts.get("dated answers", 0)
        reach, routed = counts.get("reach", 0), counts.get("routed", 0)
        print(f"{world.id}: {len(world.questions_spec)} questions, {len(world.checkpoints)} checkpoints, "
              f"{dated} dated answers; graph reach ceiling {reach}/{dated} ({reach / max(dated, 1):.0%}); "
              f"routed to their relation {routed}/{reach} ({routed / max(reach, 1):.0%})")
        print("  " + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()) if k not in ("reach", "routed")))


if __name__ == "__main__":
    main()
