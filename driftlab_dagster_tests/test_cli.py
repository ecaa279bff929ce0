"""The headless command, run as a user runs it: tables printed, files written, one-line errors."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

from driftlab_dagster.project import DEFAULT_WORLD, PROJECT_ROOT

pytestmark = pytest.mark.system


def _driftlab(*args: str, env_world: str | None = None) -> subprocess.CompletedProcess:
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "DRIFTLAB_WORLD", "DRIFTLAB_CONFIG")}
    if env_world:
        env["DRIFTLAB_WORLD"] = env_world
    return subprocess.run([sys.executable, "-m", "driftlab_dagster", *args], capture_output=True, text=True,
                          cwd=PROJECT_ROOT, env=env, timeout=600)


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    out = tmp_path_factory.mktemp("cli")
    done = _driftlab("run", "--database", str(out / "d.duckdb"), "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out, done


def test_run_prints_both_tables_in_the_posts_layout(finished):
    _, done = finished
    assert "Design            Scenario       All answers     Drifted only" in done.stdout
    assert ("Rag               StalePages     70% (70/100)    0% (0/30)       "
            "18               0              12") in done.stdout
    assert "repair: patch changed pages     99     21" in done.stdout
    assert "check: event 4 patch graph-only accuracy 100%" in done.stdout
    assert "note:" not in done.stdout  # every relation of a templated world has sentences the patterns parse
    assert done.stderr.strip() == ""


def test_run_writes_the_csv_files_and_a_queryable_duckdb_file(finished):
    out, _ = finished
    lines = (out / "tessaly_freight" / "results.csv").read_text().splitlines()
    assert len(lines) == 1 + 2000  # 5 designs x 4 scenarios x 5 days x 20
    with duckdb.connect(str(out / "d.duckdb"), read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM answers").fetchone()[0] == 2000


def test_the_core_engine_writes_the_same_results_byte_for_byte(finished, tmp_path):
    out, _ = finished
    done = _driftlab("run", "--engine", "core", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "tessaly_freight" / "results.csv").read_bytes() == \
        (out / "tessaly_freight" / "results.csv").read_bytes()


def test_a_malformed_world_file_is_one_line_on_stderr(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(DEFAULT_WORLD.read_text().replace("pages: all, graph: none", "pages: some, graph: none"))
    done = _driftlab("run", "--world", str(bad), "--database", str(tmp_path / "d.duckdb"), "--out", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "scenarios.StaleGraph.pages" in done.stderr
    assert not (tmp_path / "d.duckdb").exists()


def test_a_locked_database_is_one_line_and_loses_no_rows(finished, tmp_path):
    out, _ = finished
    database = out / "d.duckdb"
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import duckdb, sys
        conn = duckdb.connect({str(database)!r})
        print("ready", flush=True)
        sys.stdin.read()
    """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        done = _driftlab("run", "--database", str(database), "--out", str(tmp_path), "--lock-timeout", "1")
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "is locked by another process" in done.stderr
    with duckdb.connect(str(database), read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM answers").fetchone()[0] == 2000
        assert conn.execute("SELECT count(DISTINCT (scenario, day)) FROM facts").fetchone()[0] == 20


def test_a_missing_database_directory_is_one_line(tmp_path):
    done = _driftlab("run", "--database", str(tmp_path / "no" / "such" / "d.duckdb"), "--out", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "does not exist" in done.stderr


@pytest.mark.parametrize("home", ["missing", "relative/home"])
def test_a_dagster_home_that_is_no_folder_is_one_line(tmp_path, home):
    import os

    path = str(tmp_path / home) if home == "missing" else home
    env = dict(os.environ, DAGSTER_HOME=path)
    done = subprocess.run([sys.executable, "-m", "driftlab_dagster", "run", "--database", str(tmp_path / "d.duckdb"),
                           "--out", str(tmp_path)], capture_output=True, text=True, cwd=PROJECT_ROOT, env=env,
                          timeout=600)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert f"DAGSTER_HOME={path}" in done.stderr and "unset" in done.stderr
    assert not (tmp_path / "d.duckdb").exists()


def test_check_world_accepts_the_bundled_world():
    done = _driftlab("check-world", str(DEFAULT_WORLD))
    assert done.returncode == 0 and "40 pages, 4 events, 20 questions" in done.stdout
    assert "world tessaly_freight" in done.stdout


def test_a_prose_world_read_without_a_model_says_what_goes_unread(tmp_path):
    """The defaults (regex extractor, deterministic reader) on a corpus world answer only by abstaining: the run
    says so, and which flag reads the prose, instead of tables that look like a finding."""
    from driftlab_dagster.fixture_repo import build_handbook

    built = build_handbook(tmp_path / "hb")
    done = _driftlab("run", "--engine", "core", "--world", str(built.world), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stdout.splitlines() if line.startswith("note:")]
    assert len(notes) == 1
    assert "--extractor model" in notes[0] and "--reader model" in notes[0]
    with (tmp_path / "out" / "thistlecombe_handbook" / "results.csv").open(newline="") as f:
        dated = [row for row in csv.DictReader(f) if row["expected"] != "none"]
    assert dated and all(row["outcome"] == "abstain" for row in dated)  # what the note warns of


def test_check_world_validates_a_git_sourced_world_one_line_per_problem(tmp_path):
    from driftlab_dagster.fixture_repo import build_handbook

    built = build_handbook(tmp_path / "hb")
    done = _driftlab("check-world", str(built.world))
    assert done.returncode == 0, done.stderr
    assert "world thistlecombe_handbook" in done.stdout and "35 questions" in done.stdout
    # What reading it with a model costs, counted before a run: a number of calls at the first checkpoint.
    [calls] = [line for line in done.stdout.splitlines() if line.startswith("model calls:")]
    assert re.search(r"asks [1-9][\d,]* extraction calls at the first checkpoint and [\d,]+ more", calls), calls

    questions = built.questions.read_text(encoding="utf-8")
    broken = questions.replace("    2021-03-08: '149'\n", "    2022-02-01: '149'\n", 1)  # S01: no first answer
    broken = broken.replace("    '149': [$149, 149 dollars]", "    '149': []", 1)  # and an empty accepted list
    assert broken.count("\n") == questions.count("\n")
    built.questions.write_text(broken, encoding="utf-8")
    done = _driftlab("check-world", str(built.world))
    lines = done.stderr.splitlines()
    assert done.returncode == 2 and len(lines) == 1  # the accepted list is checked with the question's shape
    assert "question S01: accepted" in lines[0] and "empty" in lines[0]

    two = broken.replace("    '149': []", "    '149': [$149]", 1).replace("hops: [led_by]", "hops: [leads]", 1)
    built.questions.write_text(two, encoding="utf-8")
    done = _driftlab("check-world", str(built.world))
    lines = done.stderr.splitlines()
    assert done.returncode == 2 and len(lines) == 2, done.stderr
    assert "question S01: no answer for checkpoint 2021-06-01" in lines[0]
    assert "question S02: hops: unknown relation 'leads'" in lines[1]
    assert all(line.startswith("driftlab: error: ") for line in lines)

    built.questions.write_text(questions, encoding="utf-8")
    world = built.world.read_text(encoding="utf-8")
    built.world.write_text(world.replace("git: repo", "git: no-such-repo"), encoding="utf-8")
    done = _driftlab("check-world", str(built.world))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "no-such-repo" in done.stderr

    built.world.write_text(world.replace("checkpoints: [2021-06-01", "checkpoints: [2020-01-01, 2021-06-01"),
                           encoding="utf-8")
    done = _driftlab("check-world", str(built.world))
    assert done.returncode == 2 and "checkpoint 2020-01-01 is before the first commit" in done.stderr


def test_an_output_folder_that_cannot_be_written_fails_before_the_study_starts(tmp_path):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the folder should be")
    done = _driftlab("run", "--database", str(tmp_path / "d.duckdb"), "--out", str(blocked))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "cannot write reports" in done.stderr and "--out" in done.stderr
    assert not (tmp_path / "d.duckdb").exists()  # nothing was computed, nothing written


def test_a_bad_settings_file_is_one_line(tmp_path):
    settings = tmp_path / "driftlab.yaml"
    settings.write_text("study:\n  extractor: gpt\n")
    done = _driftlab("run", "--config", str(settings))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "study.extractor" in done.stderr and "'regex' or 'model'" in done.stderr


def test_every_setting_is_a_flag_of_the_same_name():
    from driftlab_dagster.core.settings import StudySettings

    done = _driftlab("run", "--help")
    for name in StudySettings.model_fields:
        assert "--" + name.replace("_", "-") in done.stdout


def test_a_slice_runs_the_chosen_scenarios_up_to_a_day(tmp_path):
    done = _driftlab("run", "--database", str(tmp_path / "d.duckdb"), "--out", str(tmp_path),
                     "--scenario", "StaleGraph", "--scenario", "Fresh", "--until", "2026-09-15")
    assert done.returncode == 0, done.stderr
    with duckdb.connect(str(tmp_path / "d.duckdb"), read_only=True) as conn:
        assert conn.execute("SELECT scenario, day::VARCHAR, count(*) FROM answers "
                            "GROUP BY ALL ORDER BY ALL").fetchall() == [
            (s, d, 100) for s in ("Fresh", "StaleGraph") for d in ("2026-09-01", "2026-09-08", "2026-09-15")]
    done = _driftlab("run", "--database", str(tmp_path / "d.duckdb"), "--out", str(tmp_path), "--until", "2026-13-01")
    assert done.returncode == 2 and "not in world tessaly_freight: 2026-13-01" in done.stderr


def test_a_model_server_that_is_down_is_one_line_and_writes_nothing(tmp_path):
    from driftlab_dagster.loopback import free_port

    url = f"http://127.0.0.1:{free_port()}"
    done = _driftlab("run", "--reader", "model", "--api", "openai", "--url", url, "--database",
                     str(tmp_path / "d.duckdb"), "--out", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and url in done.stderr and "start one" in done.stderr
    with duckdb.connect(str(tmp_path / "d.duckdb"), read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM answers").fetchone()[0] == 0


@pytest.mark.parametrize("argv", [["check-world", str(DEFAULT_WORLD)], ["run", "--engine", "core"]])
def test_the_routes_without_dagster_load_neither_dagster_nor_duckdb_nor_pandas(argv, tmp_path):
    """`check-world` and `run --engine core` import only what they use: Dagster, DuckDB and pandas cost a
    second of start-up that neither needs."""
    argv = argv + (["--out", str(tmp_path), "--database", str(tmp_path / "unused.duckdb")] if argv[0] == "run" else [])
    probe = textwrap.dedent(f"""
        import sys
        from driftlab_dagster.cli import main
        code = main({argv!r})
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("dagster", "duckdb", "pandas"))
        print("HEAVY", heavy, "EXIT", code)
    """)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=300)
    assert "HEAVY [] EXIT 0" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
