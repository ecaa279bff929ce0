"""Worker processes (`--workers N`): the graph and answers steps spread their scenarios and partitions over
forked processes, and the study's DuckDB file ends with the same rows, byte for byte, as with one process.
A real `driftlab run` through Dagster in this process, a real DuckDB file per run."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import duckdb
import pytest

from driftlab_dagster import cli
from driftlab_dagster.core import workers
from driftlab_dagster.core.slice_batch import SliceBatch
from driftlab_dagster.core.warehouse import TABLES

pytestmark = [pytest.mark.dagster,
              pytest.mark.skipif(not workers.runs_apart(2, 2), reason="needs fork (not on Windows)")]

_run_one = workers._run_one
_PIDS = "DRIFTLAB_TEST_WORKER_PIDS"


def _noting_the_process(index: int) -> list:
    """The workers' entry point, noting which process ran it (a forked worker finds the patch in the memory it
    was born with; the pool passes the function by name, so it lives at module level)."""
    (Path(os.environ[_PIDS]) / str(os.getpid())).touch()
    return _run_one(index)


def _killed_in_a_graph_replay(index: int) -> list:
    """The workers' entry point, killing the worker that replays the second scenario's graph, as the kernel's
    out-of-memory killer would."""
    fn, items = workers._WORK
    if isinstance(items[index], tuple) and getattr(items[index][0], "scenario", None) == "StalePages":
        os.kill(os.getpid(), signal.SIGKILL)
    return _run_one(index)


# What differs between two runs of the same study by design: which run wrote a row, when, and how long a pass took.
_PER_RUN = {"run_id", "recorded_at", "ms"}


def _tables(database: Path) -> dict[str, list[tuple]]:
    with duckdb.connect(str(database), read_only=True) as conn:
        found = {}
        for table in TABLES:
            columns = [c[0] for c in conn.execute(f"DESCRIBE {table}").fetchall() if c[0] not in _PER_RUN]
            found[table] = conn.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY ALL").fetchall()
        return found


def test_two_workers_write_the_rows_of_one(tmp_path: Path, capsys, monkeypatch):
    for name in ("DAGSTER_HOME", "DRIFTLAB_WORLD", "DRIFTLAB_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(cli, "pace_for_batch", lambda: None)
    pids = tmp_path / "pids"
    pids.mkdir()
    monkeypatch.setenv(_PIDS, str(pids))
    monkeypatch.setattr(workers, "_run_one", _noting_the_process)
    for n in (1, 2):
        out = tmp_path / f"w{n}"
        assert cli.main(["run", "--database", str(out / "d.duckdb"), "--out", str(out), "--workers", str(n)]) == 0, \
            capsys.readouterr().err
        if n == 1:
            assert not any(pids.iterdir())  # one worker: everything in this process
    assert len({p.name for p in pids.iterdir()} - {str(os.getpid())}) >= 2
    one, two = _tables(tmp_path / "w1" / "d.duckdb"), _tables(tmp_path / "w2" / "d.duckdb")
    assert one["facts"] and one["answers"] and one["governed_facts"]
    assert one == two
    assert (tmp_path / "w1" / "tessaly_freight" / "results.csv").read_bytes() == \
           (tmp_path / "w2" / "tessaly_freight" / "results.csv").read_bytes()


def test_a_killed_worker_fails_the_run_in_one_line_and_keeps_every_stored_row(tmp_path: Path, capsys, monkeypatch):
    for name in ("DAGSTER_HOME", "DRIFTLAB_WORLD", "DRIFTLAB_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(cli, "pace_for_batch", lambda: None)
    flags = ["--database", str(tmp_path / "d.duckdb"), "--out", str(tmp_path), "--workers", "2"]
    assert cli.main(["run", *flags]) == 0, capsys.readouterr().err
    # Rows the failing run would overwrite with different ones, had any of its graph writes landed.
    with duckdb.connect(str(tmp_path / "d.duckdb")) as conn:
        conn.execute("UPDATE entities SET name = name || ' (as stored)'")
    before = _tables(tmp_path / "d.duckdb")
    capsys.readouterr()
    monkeypatch.setattr(workers, "_run_one", _killed_in_a_graph_replay)
    assert cli.main(["run", *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "worker process ended" in err and "nothing was written" in err, err
    assert _tables(tmp_path / "d.duckdb") == before


def test_days_written_as_their_changes_hold_the_rows_of_whole_writes(tmp_path: Path, capsys, monkeypatch):
    """Every later day of a scenario written as its changes from the day before (in this process and in worker
    files) leaves the file as writing each day whole does. Tessaly's days are small, so both ways are forced."""
    for name in ("DAGSTER_HOME", "DRIFTLAB_WORLD", "DRIFTLAB_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(cli, "pace_for_batch", lambda: None)
    found = {}
    for name, changes_from, n in (("whole", 10**9, 1), ("changes", 0, 1), ("changes-in-workers", 0, 2)):
        monkeypatch.setattr(SliceBatch, "CHANGES_FROM_ROWS", changes_from)
        out = tmp_path / name
        assert cli.main(["run", "--database", str(out / "d.duckdb"), "--out", str(out), "--workers", str(n)]) == 0, \
            capsys.readouterr().err
        found[name] = _tables(out / "d.duckdb")
    assert found["whole"]["pages"] and found["whole"]["facts"] and found["whole"]["governed_names"]
    assert found["changes"] == found["whole"]
    assert found["changes-in-workers"] == found["whole"]
