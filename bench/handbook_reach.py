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
from collections import Counter
from pathlib import Path

from driftlab_dagster.core.grounding import relations_to_ask
from driftlab_dagster.core.values import normalise
from driftlab_dagster.core.world.corpus import CorpusWorld
from driftlab_dagster.core.world.evidence import dated_evidence
from driftlab_dagster.core.world.loader import load_world


def measure(world: CorpusWorld, show_misses: bool = False) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for d in dated_evidence(world):
        counts["dated answers"] += 1
        if d.missing:
            counts[d.missing] += 1
            if show_misses:
                print(f"  {d.question.id} {d.checkpoint}: {d.missing}: {d.quote[:80]!r}")
            continue
        # The evidence states the last hop: its subject is the question's entity on a one-hop question,
        # and on a longer one whatever the earlier hops led to (only the answer is checked then).
        spellings = [d.answer, *next((v for k, v in d.question.accepted.items()
                                      if normalise(k) == normalise(d.answer)), [])]
        naming = d.names_entity(world)
        reached = [u for u in naming if any(normalise(s) in normalise(u.text) for s in spellings)]
        if not reached:
            # Which part is missing: a user's name for the thing the pages name otherwise (the graph links
            # a question by the names its pages write), or the answer's wording.
            counts["entity not written there" if not naming else "answer not written in the unit"] += 1
            if show_misses:
                print(f"  {d.question.id} {d.checkpoint}: {d.entity!r} / {d.answer!r} not both in "
                      f"{d.units[0].render()!r}")
            continue
        counts["reach"] += 1
        relation = d.question.hops[-1]
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
