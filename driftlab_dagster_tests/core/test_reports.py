"""The report's plots: PNG bytes drawn from the numbers given, the same bytes for the same numbers; report
files written whole or not at all, and a folder that cannot take them is one line naming it."""

import os

import pytest

from driftlab_dagster.core.reports import (
    ReportFolderError,
    cost_curve_plot,
    cost_plot,
    same_slice,
    summarise,
    write_bytes,
    write_text,
)
from driftlab_dagster.core.study import run_study

PNG = b"\x89PNG\r\n\x1a\n"


def _curve(rebuild_at_4000: int) -> list[dict]:
    return [
        {"pages": 40, "approach": "full re-extract", "docs": 40, "input_tokens": 9988},
        {"pages": 4000, "approach": "full re-extract", "docs": rebuild_at_4000, "input_tokens": 995533},
        {"pages": 40, "approach": "patch changed pages", "docs": 6, "input_tokens": 1500},
        {"pages": 4000, "approach": "patch changed pages", "docs": 6, "input_tokens": 1500},
        {"pages": 40, "approach": "patch from record", "docs": 0, "input_tokens": 0},  # zero stays on a log scale
    ]


def test_cost_curve_plot_is_a_png_drawn_from_its_points():
    png = cost_curve_plot(_curve(4000))
    assert png.startswith(PNG)
    assert cost_curve_plot(_curve(4000)) == png
    assert cost_curve_plot(_curve(400)) != png


def test_cost_plot_draws_one_line_per_approach_per_event():
    costs = [{"approach": a, "event": e, "docs": d, "input_tokens": d * 250}
             for e in (1, 2) for a, d in (("full re-extract", 40), ("patch changed pages", e * 3))]
    png = cost_plot(costs)
    assert png.startswith(PNG)
    assert cost_plot(list(reversed(costs))) == png  # drawn in event order whatever the row order
    assert cost_plot([{**c, "docs": c["docs"] + 1} for c in costs]) != png


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs Linux's /dev/full")
def test_a_full_disk_under_the_report_folder_is_one_line_naming_the_folder(tmp_path):
    """Issue 21, item 5: `OSError: [Errno 28]` escaped from the report writer as a traceback. The temporary
    file is a link to /dev/full, where every write fails with ENOSPC: a real full disk, for one file."""
    folder = tmp_path / "tessaly_freight"
    folder.mkdir()
    (folder / "results.csv").write_text("the previous run's rows\n")
    for name, write in [("results.csv", lambda p: write_text(p, "scenario,design\n")),
                        ("accuracy.png", lambda p: write_bytes(p, PNG))]:
        (folder / f"{name}.tmp").symlink_to("/dev/full")
        with pytest.raises(ReportFolderError) as info:
            write(folder / name)
        message = str(info.value)
        assert message.startswith(f"cannot write {name} to {folder}: the disk is full") and "--out" in message
        assert "\n" not in message
    assert sorted(p.name for p in folder.iterdir()) == ["results.csv"]  # no temporary file left behind
    assert (folder / "results.csv").read_text() == "the previous run's rows\n"  # the old report is whole


def test_a_slices_reference_column_covers_that_slice_only(world):
    """`driftlab run --until D --scenario S` with a model prints the deterministic study beside it: the same
    scenarios and checkpoints, not the whole study (which counted drifted answers at checkpoints the run never
    reached)."""
    whole = run_study(world).results
    first = min(int(r["step"]) for r in whole)
    sliced = [dict(r, step=str(r["step"])) for r in whole if r["scenario"] == "Fresh" and int(r["step"]) == first]
    reference = same_slice(whole, sliced)  # steps as the CSV gives them back: text
    assert {(r["scenario"], int(r["step"])) for r in reference} == {("Fresh", first)}
    assert len(reference) == len(sliced)
    [row] = [s for s in summarise(reference, world.scenario_names) if s["design"] == "Rag"]
    assert row["answers"] == len(world.question_ids) and row["scenario"] == "Fresh"
    assert len(summarise(whole, world.scenario_names)) > len(summarise(reference, world.scenario_names))


def test_the_summary_counts_what_a_design_read_apart_from_what_it_won_by_abstaining(tmp_path):
    """A prose world read without a model abstains everywhere: every "none" answer is right and every stated
    one is not, and the summary's `stated` columns say so where "All" alone looks like a finding."""
    from driftlab_dagster.core.world.loader import load_world
    from driftlab_dagster.fixture_repo import build_handbook

    world = load_world(build_handbook(tmp_path / "hb").world)
    results = run_study(world).results
    for row in summarise(results, world.scenario_names):
        cell = [r for r in results if r["design"] == row["design"] and r["scenario"] == row["scenario"]]
        none = sum(r["expected"] == "none" for r in cell)
        assert 0 < none < row["answers"]
        assert row["stated"] == row["answers"] - none and row["stated_correct"] == 0
        assert row["correct"] == none
