"""The world generator: larger worlds that pass the same validation as a hand-written file, keep the
source's study intact, and grow the corpus without growing what an event changes."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter

import pytest

from driftlab_dagster.core.generate import CannotScale, dump_world, scale_world
from driftlab_dagster.core.study import run_study
from driftlab_dagster.core.world import WorldFileError, yaml_guard
from driftlab_dagster.core.world.loader import load_world, parse_world
from driftlab_dagster.core.world.templated_spec import MAX_PAGES
from driftlab_dagster.fixture_repo import build_handbook
from driftlab_dagster.project import DATA_DIR, PROJECT_ROOT

WORLDS = sorted((DATA_DIR / "worlds").glob("*.yaml"))


def _costs(result) -> dict[tuple[int, str], dict]:  # type: ignore[no-untyped-def]
    return {(c["event"], c["approach"]): c for c in result.costs}


def _accuracy(result) -> Counter:  # type: ignore[no-untyped-def]
    return Counter((r["design"], r["scenario"]) for r in result.results if r["outcome"] == "correct")


@pytest.mark.parametrize("path", WORLDS, ids=lambda p: p.stem)
def test_a_scaled_world_validates_and_an_event_changes_as_many_pages_as_in_the_source(path):
    source = load_world(path)
    scaled = parse_world(dump_world(scale_world(source, copies=4, seed=3)), "scaled")
    assert scaled.page_count == 4 * source.page_count
    assert scaled.id != source.id and scaled.question_ids == source.question_ids
    assert [c.key for c in scaled.checkpoints] == [c.key for c in source.checkpoints]

    base, big = run_study(source), run_study(scaled)
    base_costs, big_costs = _costs(base), _costs(big)
    assert base_costs.keys() == big_costs.keys()
    for key, cost in base_costs.items():
        if "full re-extract" in key[1]:  # rebuilding reads every page: four times as many
            assert big_costs[key]["docs"] == 4 * cost["docs"]
        else:  # patching reads what changed, and the copies never change
            assert big_costs[key]["docs"] == cost["docs"], key
    # The copies speak only of their own renamed things: every graph-only answer is as in the source.
    for design in ("Graph", "Governed"):
        assert {k: v for k, v in _accuracy(big).items() if k[0] == design} == \
               {k: v for k, v in _accuracy(base).items() if k[0] == design}


def test_the_copies_rename_what_the_facts_are_about_and_never_repeat_the_source():
    source = load_world(DATA_DIR / "worlds" / "tessaly_freight.yaml")
    scaled = parse_world(dump_world(scale_world(source, copies=3, seed=11)), "scaled")
    step = len(scaled.checkpoints) - 1
    source_ids = {p.id for p in source.spec.pages}
    source_subjects = {t.subject for p in source.pages_at("Fresh", 0) for t in source.ontology.parse(p.body)}
    copies = [p for p in scaled.pages_at("Fresh", step) if p.id not in source_ids]
    assert len(copies) == 2 * source.page_count
    said = [t for p in copies for t in source.ontology.parse(p.body)]
    assert said and not {t.subject for t in said} & source_subjects
    assert not any(source.ontology[t.predicate].fixed_subject for t in said)
    # They never change: the same text before and after every event.
    assert {p.id: p.body for p in scaled.pages_at("Fresh", 0) if p.id not in source_ids} == \
           {p.id: p.body for p in copies}


def test_the_same_seed_gives_the_same_bytes_and_another_seed_other_names():
    source = load_world(DATA_DIR / "worlds" / "tessaly_freight.yaml")
    one = dump_world(scale_world(source, copies=3, seed=5))
    assert one == dump_world(scale_world(source, copies=3, seed=5))
    assert one != dump_world(scale_world(source, copies=3, seed=6))


def test_worlds_that_cannot_be_scaled_say_why(tmp_path):
    source = load_world(DATA_DIR / "worlds" / "tessaly_freight.yaml")
    with pytest.raises(CannotScale, match="MAX_PAGES|MAX_YAML_NODES"):
        scale_world(source, copies=MAX_PAGES // source.page_count + 1)
    handbook = build_handbook(tmp_path)
    with pytest.raises(CannotScale, match="only a templated world can be scaled"):
        scale_world(load_world(handbook.world), copies=2)


@pytest.mark.parametrize("values", [20_000, yaml_guard.MAX_YAML_NODES])
def test_the_advised_number_of_copies_is_the_real_limit(monkeypatch, values):
    """Issue 21, item 20: --copies 1700 was refused for too many YAML values after the advice "ask for at
    most 2,500 copies" (MAX_PAGES alone). With the loader's limit lowered so that it binds first, the advised
    number loads and one more is refused, by the generator and by the loader alike."""
    from driftlab_dagster.core import generate

    monkeypatch.setattr(yaml_guard, "MAX_YAML_NODES", values)
    monkeypatch.setattr(generate, "MAX_YAML_NODES", values)
    source = load_world(DATA_DIR / "worlds" / "tessaly_freight.yaml")
    limit, why = generate.max_copies(source)
    assert limit < MAX_PAGES // source.page_count and "MAX_YAML_NODES" in why
    with pytest.raises(CannotScale, match=f"ask for at most {limit:,} copies"):
        scale_world(source, copies=limit + 1)
    if values < yaml_guard.MAX_YAML_NODES:  # the real limit's files take a while to parse: checked small
        assert parse_world(dump_world(scale_world(source, copies=limit)), "ok.yaml").page_count == \
            limit * source.page_count
        with pytest.raises(WorldFileError, match="MAX_YAML_NODES"):
            parse_world(dump_world(generate._with_copies(source, limit + 1, 0)), "too-big.yaml")


def test_generate_world_into_a_folder_or_a_full_disk_is_one_line_and_leaves_no_tmp(tmp_path, capsys, monkeypatch):
    """Issue 21, item 20: `--out <an existing folder>` left `<folder>.tmp` behind. /dev/full stands in for a
    full disk: the temporary file is a link to it, so writing it fails with ENOSPC for real."""
    from driftlab_dagster import cli

    monkeypatch.setattr(cli, "pace_for_batch", lambda: None)
    source = str(DATA_DIR / "worlds" / "tessaly_freight.yaml")
    folder = tmp_path / "worlds"
    folder.mkdir()
    assert cli.main(["generate-world", source, "--copies", "2", "--out", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{folder} is a folder: --out names the world file" in err
    full = tmp_path / "big.yaml"
    if os.path.exists("/dev/full"):
        (tmp_path / "big.yaml.tmp").symlink_to("/dev/full")
        assert cli.main(["generate-world", source, "--copies", "2", "--out", str(full)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "cannot write the world file (the disk is full)" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["worlds"]


@pytest.mark.system  # starts the command, or a second process holding the file
def test_generate_world_writes_a_file_that_check_world_accepts_and_the_study_runs_through_dagster(tmp_path):
    out = tmp_path / "big.yaml"
    env_free = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "DRIFTLAB_WORLD", "DRIFTLAB_CONFIG")}
    cli = [sys.executable, "-m", "driftlab_dagster"]
    made = subprocess.run(cli + ["generate-world", str(DATA_DIR / "worlds" / "tessaly_freight.yaml"), "--copies", "3",
                                 "--out", str(out)], capture_output=True, text=True, cwd=PROJECT_ROOT, env=env_free)
    assert made.returncode == 0, made.stderr
    checked = subprocess.run(cli + ["check-world", str(out)], capture_output=True, text=True, cwd=PROJECT_ROOT,
                             env=env_free)
    assert checked.returncode == 0 and "120 pages" in checked.stdout, checked.stdout + checked.stderr

    ran = subprocess.run(cli + ["run", "--world", str(out), "--database", str(tmp_path / "d.duckdb"), "--out",
                                str(tmp_path / "out")], capture_output=True, text=True, cwd=PROJECT_ROOT,
                         env=env_free, timeout=900)
    assert ran.returncode == 0, ran.stderr
    world = load_world(out)
    expected = run_study(world)  # the in-memory core on the same file
    results = (tmp_path / "out" / world.id / "results.csv").read_text().splitlines()
    assert len(results) - 1 == len(expected.results)
    core = tmp_path / "core"
    subprocess.run(cli + ["run", "--engine", "core", "--world", str(out), "--out", str(core)], check=True,
                   capture_output=True, cwd=PROJECT_ROOT, env=env_free)
    assert (core / world.id / "results.csv").read_text() == (tmp_path / "out" / world.id / "results.csv").read_text()
    assert (core / world.id / "costs.csv").read_text().count("\n") == \
           (tmp_path / "out" / world.id / "costs.csv").read_text().count("\n")
