"""How far two careful readers agree on what the labelled units state: a second, independent labelling of some of
the units (`data/handbooks/18f/labels-second.yaml`, made blind to the first) scored against the first with the
very rule `bench/labelled_extraction.py` scores the model by. The agreement is the ceiling of that score: an
extractor cannot be expected to agree with one reader more than another careful reader does.

    PYTHONPATH=. .venv/bin/python bench/label_agreement.py [--first F] [--second F]
        [--replay FILE ... --model ID] [--show]

Prints, per half of the labelled units (`labelled_extraction.py --sample 2`: the development half the rules
were written on, and the held-out half) and for both, the second reader's precision and recall against the
first (the first's against the second is the same pair swapped), the same with any subject (relation and value
only), and, with `--replay`, the model's score on the same units from its recorded replies, side by side.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import yaml
from labelled_extraction import labelled_units, same, same_value

from driftlab_dagster.core.call_cache import CachedClient
from driftlab_dagster.core.model_extractor import ModelExtractor
from driftlab_dagster.core.ontology import Triple
from driftlab_dagster.core.replay import ReplayClient
from driftlab_dagster.core.world.corpus import CorpusWorld
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster.project import DATA_DIR

HANDBOOK = DATA_DIR / "handbooks" / "18f"


def triples(label: dict) -> list[Triple]:
    return [Triple(t["subject"], t["relation"], str(t["object"])) for t in label["triples"] or []]


def agreement(pairs: list[tuple[list[Triple], list[Triple]]], match) -> tuple[int, int, int, int]:
    """(right, given, recalled, labelled) of the second list of each pair against the first."""
    right = given = recalled = labelled = 0
    for truth, got in pairs:
        given += len(got)
        labelled += len(truth)
        right += sum(any(match(g, t) for t in truth) for g in got)
        recalled += sum(any(match(g, t) for g in got) for t in truth)
    return right, given, recalled, labelled


def score_line(name: str, counts: tuple[int, int, int, int]) -> str:
    right, given, recalled, labelled = counts
    return (f"| {name} | {right / max(given, 1):.1%} ({right}/{given}) | "
            f"{recalled / max(labelled, 1):.1%} ({recalled}/{labelled}) |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--first", type=Path, default=HANDBOOK / "labels.yaml")
    parser.add_argument("--second", type=Path, default=HANDBOOK / "labels-second.yaml")
    parser.add_argument("--replay", type=Path, nargs="+",
                        help="also score the model's recorded replies (one replay file or several) on the same units")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--show", action="store_true", help="print every triple the two readers disagree on")
    args = parser.parse_args()
    world = load_world(HANDBOOK / "handbook.yaml")
    if not isinstance(world, CorpusWorld):
        raise SystemExit("a corpus world is needed")
    labels = yaml.safe_load(args.first.read_text("utf-8"))
    position = {(f["page"], str(f["checkpoint"]), f["unit"]): n for n, f in enumerate(labels)}
    second = yaml.safe_load(args.second.read_text("utf-8"))
    unknown = [s for s in second if (s["page"], str(s["checkpoint"]), s["unit"]) not in position]
    if unknown:
        raise SystemExit(f"{len(unknown)} units of {args.second} are not in {args.first}, e.g. {unknown[0]['unit']!r}")
    at = [position[(s["page"], str(s["checkpoint"]), s["unit"])] for s in second]
    both = [(labels[n], s) for n, s in zip(at, second)]
    pairs = [(triples(a), triples(b)) for a, b in both]
    readers = {"second reader": pairs}
    if args.replay:
        units, _ = labelled_units(world, [a for a, _ in both])
        with tempfile.TemporaryDirectory() as folder:  # the files' replies as one replay file
            replies = Path(folder) / "replies.jsonl"
            replies.write_text("".join(f.read_text("utf-8") for f in args.replay), "utf-8")
            client = CachedClient(ReplayClient.from_file(replies, args.model))
        extractor = ModelExtractor(world.ontology, client, world_text=world.text, units=world.text_units)
        extractor.read_ahead_units([u for u, _ in units])
        readers[f"{args.model} (replayed)"] = [(truth, extractor.extract_unit(unit)) for unit, truth in units]

    def subject_too(a: Triple, b: Triple) -> bool:
        return same(world, a, b)

    # labelled_extraction's halves: rules were written on the even positions, the odd ones are held out
    halves = {half: chosen for half, chosen in (("development half", [n % 2 == 0 for n in at]),
                                                ("held-out half", [n % 2 == 1 for n in at])) if any(chosen)}
    if len(halves) == 2:
        halves["all"] = [True] * len(at)
    lines = ["| scored against the first labelling | units | facts (first) | precision | recall |",
             "|---|---|---|---|---|"]
    for half, chosen in halves.items():
        for reader, scored in readers.items():
            kept = [pair for pair, keep in zip(scored, chosen) if keep]
            for match, how in ((subject_too, ""), (same_value, ", any subject")):
                lines.append(score_line(f"{half}: {reader}{how} | {len(kept)} | {sum(len(t) for t, _ in kept)}",
                                        agreement(kept, match)))
    print(f"{len(both)} units labelled twice, {sum(len(a) for a, _ in pairs)} facts in the first labelling, "
          f"{sum(len(b) for _, b in pairs)} in the second")
    print("\n".join(lines))
    if args.show:
        for (a, b), (label, _) in zip(pairs, both):
            for t in a:
                if not any(subject_too(g, t) for g in b):
                    print(f"  first only   {t}  in {label['unit'][:90]!r}")
            for g in b:
                if not any(subject_too(g, t) for t in a):
                    print(f"  second only  {g}  in {label['unit'][:90]!r}")


if __name__ == "__main__":
    main()
