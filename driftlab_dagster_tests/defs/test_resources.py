"""The resources' failures reach the person as one line: a full disk under the DuckDB file or the report
folder, and a file that is not a DuckDB database, through the warehouse resource and a real Dagster run."""

from __future__ import annotations

import os
import sqlite3

import duckdb
import pytest

from driftlab_dagster import cli
from driftlab_dagster.core.reports import ReportFolderError
from driftlab_dagster.core.warehouse import WarehouseError
from driftlab_dagster.defs.resources import WarehouseResource

pytestmark = pytest.mark.dagster

SLICE = ["--scenario", "Fresh", "--until", "2026-09-08"]


def test_the_warehouse_resource_turns_a_full_disk_into_one_line_and_leaves_other_errors_alone(tmp_path):
    """Issue 21, item 4, at the boundary every asset writes through (a real full disk cannot be made here;
    docs/dagster.md has the manual check)."""
    warehouse = WarehouseResource(database=str(tmp_path / "d.duckdb"))
    with pytest.raises(WarehouseError) as info:
        with warehouse.get_connection() as conn:
            conn.execute("SELECT 1")
            raise duckdb.TransactionException("TransactionContext Error: Failed to commit: could not write "
                                              "file: No space left on device")
    assert str(info.value).startswith(f"DuckDB file {tmp_path / 'd.duckdb'}: the disk is full")
    with pytest.raises(ReportFolderError):  # a report's own error is not the DuckDB file's
        with warehouse.get_connection():
            raise ReportFolderError(28, "cannot write results.csv: the disk is full")


def _run(capsys, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = cli.main(["run", *argv])
    return code, capsys.readouterr().err


@pytest.fixture
def shell(monkeypatch):
    for name in ("DAGSTER_HOME", "DRIFTLAB_WORLD", "DRIFTLAB_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(cli, "pace_for_batch", lambda: None)


def test_a_sqlite_file_as_database_is_named_and_nothing_is_downloaded(tmp_path, capsys, shell):
    """Issue 21, item 16."""
    lite = tmp_path / "wiki.sqlite"
    with sqlite3.connect(lite) as made:
        made.execute("CREATE TABLE pages (id)")
    code, err = _run(capsys, "--database", str(lite), "--out", str(tmp_path), *SLICE)
    assert code == 2 and err.count("\n") == 1, err
    assert f"{lite} is a SQLite database, not a DuckDB database" in err and "Extension" not in err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs Linux's /dev/full")
def test_a_full_disk_under_the_report_folder_stops_the_run_in_one_line(tmp_path, capsys, shell):
    """Issue 21, item 5, through a real run: the report writer's temporary file is a link to /dev/full."""
    folder = tmp_path / "tessaly_freight"
    folder.mkdir()
    (folder / "results.csv.tmp").symlink_to("/dev/full")
    code, err = _run(capsys, "--database", str(tmp_path / "d.duckdb"), "--out", str(tmp_path), *SLICE)
    assert code == 2 and err.count("\n") == 1, err
    assert f"cannot write results.csv to {folder}: the disk is full" in err
    assert not (folder / "results.csv.tmp").exists()
