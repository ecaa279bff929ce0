"""What Governed would answer if it took the page reader's answer where its graph is silent, from a study's
results alone (no model call, no rerun).

    PYTHONPATH=. .venv/bin/python bench/governed_fallback.py WORLD.yaml RESULTS.csv

For every Governed answer whose `why` is "not in graph", Rag's answer to the same question on the same day
(Rag reads the same day's pages) is taken in its place only when some statement of that day's pages passes
the extractor's own grounding test for it: the statement writes the answer's value and, with its heading
trail, the question's entity (values.normalise, values.names_match, as bench/handbook_reach.py checks a perfect
extractor's reach). Without that guard the fallback is Rag itself, which answers the questions a handbook does
not answer yet with a neighbouring statement's value. Prints each (Governed's outcome, the fallback's) move
and the answers gained and lost. Fresh scenario rows only: they read every page as it stands that day.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import pandas as pd

from driftlab_dagster.core.values import names_match, normalise
from driftlab_dagster.core.world.corpus import CorpusWorld
from driftlab_dagster.core.world.loader import load_world


def moves(world: CorpusWorld, results: pd.DataFrame) -> Counter[tuple[str, str, bool]]:
    """(Governed's outcome, the guarded fallback's outcome, whether the guard let Rag's answer in) -> answers."""
    results = results[results.scenario == "Fresh"].fillna("")
    governed = results[results.design == "Governed"].set_index(["step", "question"])
    rag = results[results.design == "Rag"].set_index(["step", "question"])
    questions = {q.id: q for q in world.questions_spec}
    statements: dict[int, list[tuple[str, str]]] = {}  # step -> (name key of context and text, normalised text)
    counted: Counter[tuple[str, str, bool]] = Counter()
    for (step, question), row in governed.iterrows():
        if row.why != "not in graph":
            continue
        if step not in statements:
            pages = world.snapshots[step].pages.values()
            statements[step] = [(world.name_key(f"{u.context} {u.text}"), normalise(u.text))
                                for p in pages for u in world.text_units(p.body, p.title)]
        read = rag.loc[(step, question)]
        spec = questions[question]
        entity = spec.entity if isinstance(spec.entity, str) else world._as_of(spec.entity,
                                                                               world.checkpoints[step].day)
        value, name = normalise(str(read.answer)), world.name_key(entity)
        grounded = bool(value) and any(value in text and names_match(name, context)
                                       for context, text in statements[step])
        counted[(row.outcome, read.outcome if grounded else row.outcome, grounded)] += 1
    return counted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("world", type=Path)
    parser.add_argument("results", type=Path, help="a results.csv of `driftlab run --reader model` on that world")
    args = parser.parse_args()
    world = load_world(args.world)
    if not isinstance(world, CorpusWorld):
        raise SystemExit(f"{args.world}: a corpus world (pages from a revision history) is needed")
    counted = moves(world, pd.read_csv(args.results))
    for (before, after, grounded), n in sorted(counted.items()):
        print(f"{n:5d}  {before:8s} -> {after:8s}  ({'Rag answer grounded' if grounded else 'kept: not grounded'})")
    gained = sum(n for (before, after, _), n in counted.items() if before != "correct" and after == "correct")
    lost = sum(n for (before, after, _), n in counted.items() if before == "correct" and after != "correct")
    print(f"Governed 'not in graph' answers: {sum(counted.values())}; right answers gained {gained}, lost {lost}")


if __name__ == "__main__":
    main()
