"""The study on a real PostgreSQL-backed Dagster instance, as `make pg-up` starts it: the server Debian ships
(as the `postgres` user when the tests run as root), the webserver and the daemon on that instance, and
`driftlab run` pointed at it. A run killed with SIGKILL mid-way is recovered by a rerun with the rows of the
in-memory study; every partition's metadata and checks are read back through the webserver's GraphQL.

Needs PostgreSQL's server programs (`.ci/run` installs Debian's postgresql when they are missing).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest
import sqlalchemy
import yaml

from driftlab_dagster.core.reports import results_csv
from driftlab_dagster.core.study import run_study
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster.headless import hold_connections
from driftlab_dagster.local_postgres import LocalPostgres, down, instance_settings, running, throwaway, up
from driftlab_dagster.project import PROJECT_ROOT
from driftlab_dagster_tests.support.graphql import graphql

pytestmark = pytest.mark.system

WORLD = PROJECT_ROOT / "data" / "worlds" / "tessaly_freight.yaml"


@pytest.fixture(scope="module")
def pg():
    with throwaway(services=True) as server:
        yield server


def _env(pg: LocalPostgres, settings: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DRIFTLAB_WORLD"}
    return dict(env, DAGSTER_HOME=str(pg.home), DRIFTLAB_CONFIG=str(settings))


def test_the_study_through_postgres_survives_a_killed_run_and_shows_in_graphql(pg, tmp_path):
    settings = tmp_path / "driftlab.yaml"
    settings.write_text(f"worlds: [{WORLD}]\ndatabase: {tmp_path / 'pg.duckdb'}\noutput_dir: {tmp_path}\n")
    instance = dg.DagsterInstance.from_config(str(pg.home))
    assert type(instance.run_storage).__name__ == "PostgresRunStorage"
    assert type(instance.event_log_storage).__name__ == "PostgresEventLogStorage"
    assert type(instance.schedule_storage).__name__ == "PostgresScheduleStorage"

    # A run killed with SIGKILL once its first Dagster run has started writing.
    first = subprocess.Popen([sys.executable, "-m", "driftlab_dagster", "run"], env=_env(pg, settings),
                             cwd=PROJECT_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    deadline = time.monotonic() + 300
    while not instance.get_runs(filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED])):
        assert first.poll() is None, "the first run ended before it could be killed"
        assert time.monotonic() < deadline, "no run started in 300 s"
        time.sleep(0.2)
    time.sleep(3)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()

    # The rerun, right away, finishes with the in-memory study's rows.
    rerun = subprocess.run([sys.executable, "-m", "driftlab_dagster", "run"], env=_env(pg, settings),
                           cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=900)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    expected = results_csv(run_study(load_world(WORLD)).results)
    assert (tmp_path / "tessaly_freight" / "results.csv").read_text(encoding="utf-8") == expected

    # Through the webserver that runs on the same PostgreSQL instance: each partition's metadata and checks.
    base = f"http://127.0.0.1:{pg.ui_port}"
    deadline = time.monotonic() + 180
    while True:
        try:
            entries = graphql(base, "{ workspaceOrError { ... on Workspace { locationEntries { loadStatus } } } }")
            if entries["workspaceOrError"]["locationEntries"][0]["loadStatus"] == "LOADED":
                break
        except (OSError, KeyError, IndexError, TypeError, ValueError):
            pass
        assert time.monotonic() < deadline, f"the webserver did not load in 180 s; see {pg.state}/webserver.log"
        time.sleep(0.5)
    for partition, pages in (("2026-09-01|Fresh", 40), ("2026-09-29|StaleGraph", 0)):
        node = graphql(base, """query($partition: String!) { assetNodeOrError(assetKey:
            {path: ["tessaly_freight", "fact_graph"]}) { ... on AssetNode { assetMaterializations(
            partitions: [$partition], limit: 1) { metadataEntries { label ... on IntMetadataEntry { intValue } } }
            } } }""", {"partition": partition})
        [latest] = node["assetNodeOrError"]["assetMaterializations"]
        shown = {e["label"]: e.get("intValue") for e in latest["metadataEntries"]}
        assert shown["pages_read"] == pages
    behind = graphql(base, """{ assetCheckExecutions(assetKey: {path: ["tessaly_freight", "fact_graph"]},
        checkName: "pages_changed_since_read", partition: "2026-09-29|StaleGraph", limit: 1) {
        evaluation { success metadataEntries { label ... on IntMetadataEntry { intValue } } } } }""")
    [execution] = behind["assetCheckExecutions"]
    assert execution["evaluation"]["success"] is False
    assert {e["label"]: e.get("intValue") for e in execution["evaluation"]["metadataEntries"]}["count"] == 21


def test_the_webserver_and_the_daemon_hand_event_batching_to_the_runs_they_launch(pg):
    # A run the UI or the daemon launches is a child of theirs and inherits their environment. (Before the
    # next test, which leaves the services stopped.)
    for name in ("webserver", "daemon"):
        pid = int((pg.state / f"{name}.pid").read_text())
        environment = dict(entry.split("=", 1) for entry in
                           Path(f"/proc/{pid}/environ").read_bytes().decode().split("\0") if "=" in entry)
        assert int(environment.get("DAGSTER_EVENT_BATCH_SIZE", "0")) > 1, name


def test_down_stops_the_server_and_up_brings_it_back_with_its_runs(pg):
    before = len(dg.DagsterInstance.from_config(str(pg.home)).get_runs())
    down(pg)
    assert not running(pg)
    up(pg, services=False)
    assert running(pg)
    assert len(dg.DagsterInstance.from_config(str(pg.home)).get_runs()) == before


def test_a_headless_run_holds_its_connections_where_dagster_would_open_one_per_call(pg, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text(yaml.safe_dump(instance_settings(pg)), encoding="utf-8")
    # Every new database connection any engine's pool makes in this process, counted as it is made.
    made: list[object] = []

    def count(connection, record):
        made.append(connection)

    sqlalchemy.event.listen(sqlalchemy.pool.Pool, "connect", count)
    try:
        opened = {}
        for held in (False, True):
            with dg.DagsterInstance.from_config(str(home)) as instance:
                if held:
                    hold_connections(instance)
                before = len(made)
                for _ in range(30):
                    instance.get_runs(limit=1)
                    instance.event_log_storage.get_event_records(
                        dg.EventRecordsFilter(dg.DagsterEventType.ASSET_MATERIALIZATION), limit=1)
                opened[held] = len(made) - before
    finally:
        sqlalchemy.event.remove(sqlalchemy.pool.Pool, "connect", count)
    assert opened[False] >= 60, opened  # Dagster's default: a connection per storage call
    assert opened[True] <= 2, opened  # one held by the run storage, one by the event log
