"""The study as a person meets it in `dagster dev` after `make run`: a real webserver and daemon on loopback
with a temporary DAGSTER_HOME that a real `driftlab run` filled first, driven through GraphQL (load, list,
per-partition metadata and checks, a backfill of one scenario, staleness after an extractor change in the
settings file and *Reload definitions*) and through headless Chromium (the asset graph, a partition's checks).

Needs Debian's chromium (`.ci/run` installs it). Everything started here is stopped at the end, and the
test fails if any process of the group is left.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import pytest

from driftlab_dagster.loopback import free_port
from driftlab_dagster.project import PROJECT_ROOT
from driftlab_dagster_tests.support.graphql import graphql

pytestmark = pytest.mark.ui

ARTIFACTS = PROJECT_ROOT / "driftlab_dagster_tests" / "artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROME_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]
DAYS = ["2026-09-01", "2026-09-08", "2026-09-15", "2026-09-22", "2026-09-29"]
STALE_GRAPH_KEYS = [str(dg.MultiPartitionKey({"scenario": "StaleGraph", "day": d})) for d in DAYS]
W = "tessaly_freight"


# The settings file the code location reads; the test edits `extractor` and reloads.
SETTINGS = """worlds: [{world}]
database: {work}/ui.duckdb
output_dir: {work}
study:
  extractor: {extractor}
  model: qwen2.5-coder-0.5b
  api: openai
""".replace("{world}", str(PROJECT_ROOT / "data" / "worlds" / "tessaly_freight.yaml"))


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


@pytest.fixture(scope="module")
def ui(tmp_path_factory):
    home = tmp_path_factory.mktemp("dagster_home")
    (home / "dagster.yaml").write_text((PROJECT_ROOT / "dagster.yaml").read_text())  # the project's, nux off
    work = tmp_path_factory.mktemp("ui_study")
    settings = work / "driftlab.yaml"
    settings.write_text(SETTINGS.format(work=work, extractor="regex"))
    env = {k: v for k, v in os.environ.items() if k != "DRIFTLAB_WORLD"}
    env.update(DAGSTER_HOME=str(home), DRIFTLAB_CONFIG=str(settings))
    # What `make run` does, into the same Dagster home the UI then shows.
    subprocess.run([sys.executable, "-m", "driftlab_dagster", "run"], env=env, cwd=PROJECT_ROOT, check=True,
                   timeout=600, capture_output=True)
    port = free_port()
    process = subprocess.Popen([str(Path(sys.executable).with_name("dagster")), "dev", "-w", "workspace.yaml",
                                "-h", "127.0.0.1", "-p", str(port)], env=env, cwd=PROJECT_ROOT,
                               start_new_session=True, stdout=open(work / "dagster-dev.log", "wb"),
                               stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while True:
        assert process.poll() is None, f"dagster dev exited; see {work / 'dagster-dev.log'}"
        try:
            entries = graphql(base, "{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus "
                                    "locationOrLoadError { __typename } } } } }")["workspaceOrError"]["locationEntries"]
            if entries and all(e["loadStatus"] == "LOADED" for e in entries):
                break
        except (OSError, KeyError, TypeError, ValueError):
            pass
        assert time.monotonic() < deadline, "dagster dev did not load the code location in 180 s"
        time.sleep(0.5)
    yield {"base": base, "entries": entries, "settings": settings, "work": work, "home": home}
    os.killpg(process.pid, signal.SIGINT)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    deadline = time.monotonic() + 90  # code servers may outlive the leader by their heartbeat timeout
    while _group_alive(process.pid) and time.monotonic() < deadline:
        time.sleep(0.5)
    left = _group_alive(process.pid)
    if left:
        os.killpg(process.pid, signal.SIGKILL)
    assert not left, "processes of dagster dev were still running 90 s after shutdown"


def _stale(base: str, keys: list[str]) -> list[str]:
    query = """query($keys: [String!]!) { assetNodeOrError(assetKey: {path: ["tessaly_freight", "fact_graph"]}) {
        ... on AssetNode { staleStatusByPartition(partitions: $keys) } } }"""
    node = graphql(base, query, {"keys": keys})
    return node["assetNodeOrError"]["staleStatusByPartition"]


def _check(base: str, name: str, partition: str) -> dict:
    executions = graphql(base, """query($name: String!, $partition: String) {
        assetCheckExecutions(assetKey: {path: ["tessaly_freight", "fact_graph"]}, checkName: $name, """
                         """partition: $partition,
                             limit: 1) {
          partition status runId evaluation { success severity metadataEntries { label """
                         """... on IntMetadataEntry { intValue } } } } }""",
                         {"name": name, "partition": partition})
    return executions["assetCheckExecutions"][0]


def _metadata(base: str, asset: str, partition: str) -> dict:
    """The latest materialisation's metadata of one partition, as the UI shows it."""
    node = graphql(base, """query($path: [String!]!, $partition: String!) { assetNodeOrError(assetKey: {path: $path}) {
        ... on AssetNode { assetMaterializations(partitions: [$partition], limit: 1) { runId metadataEntries {
          label ... on IntMetadataEntry { intValue } ... on TextMetadataEntry { text } } } } } }""",
                   {"path": [W, asset], "partition": partition})
    [latest] = node["assetNodeOrError"]["assetMaterializations"]
    return {"runId": latest["runId"],
            **{e["label"]: e.get("intValue", e.get("text")) for e in latest["metadataEntries"]}}


def _rows(work: Path, table: str, partition: str) -> int:
    import duckdb

    day, scenario = partition.split("|")
    with duckdb.connect(str(work / "ui.duckdb"), read_only=True) as conn:
        return conn.execute(f"SELECT count(*) FROM {table} WHERE scenario = ? AND day = ?",
                            [scenario, day]).fetchone()[0]


def test_the_code_location_loads_and_lists_the_study(ui):
    assert [(e["name"], e["locationOrLoadError"]["__typename"]) for e in ui["entries"]] == [
        ("driftlab_dagster", "RepositoryLocation")]
    nodes = graphql(ui["base"], """{ assetNodes { assetKey { path } groupName isPartitioned
        partitionKeysByDimension { name partitionKeys } } }""")["assetNodes"]
    by_name = {n["assetKey"]["path"][-1]: n for n in nodes}
    assert {tuple(n["assetKey"]["path"][:-1]) for n in nodes} == {(W,)}
    assert set(by_name) >= {"world", "pages", "extraction_log", "fact_graph", "answers", "maintenance_costs",
                            "graph_repair", "accuracy_report", "cost_report"}
    dims = {d["name"]: d["partitionKeys"] for d in by_name["fact_graph"]["partitionKeysByDimension"]}
    assert dims == {"day": DAYS, "scenario": ["Fresh", "StalePages", "StaleGraph", "PartialPages"]}
    assert by_name["fact_graph"]["groupName"] == "graph"


def test_the_jobs_page_lists_the_runs_make_run_started(ui):
    # A run started in process has no code-location origin; its repository tag is what lists it under its job.
    for job in (f"{W}__study", f"{W}__maintenance"):
        node = graphql(ui["base"], """query($job: String!) { pipelineOrError(params: {pipelineName: $job,
            repositoryName: "__repository__", repositoryLocationName: "driftlab_dagster"}) {
            __typename ... on Pipeline { runs { runId status } } } }""", {"job": job})["pipelineOrError"]
        assert node["__typename"] == "Pipeline"
        assert node["runs"] and {r["status"] for r in node["runs"]} == {"SUCCESS"}, job


def test_after_make_run_each_partition_shows_its_own_metadata_and_checks(ui):
    base, work = ui["base"], ui["work"]
    for partition in ("2026-09-01|Fresh", "2026-09-29|StaleGraph", "2026-09-15|StalePages"):
        shown = _metadata(base, "fact_graph", partition)
        assert shown["dagster/row_count"] == _rows(work, "facts", partition)
        assert _metadata(base, "answers", partition)["dagster/row_count"] == _rows(work, "answers", partition) == 100
    assert _metadata(base, "fact_graph", "2026-09-01|Fresh")["pages_read"] == 40
    assert _metadata(base, "fact_graph", "2026-09-29|StaleGraph")["maintenance"] == "none"
    for partition in STALE_GRAPH_KEYS:
        for name in ("pages_changed_since_read", "facts_from_superseded_pages", "entity_spelling_splits"):
            assert _check(base, name, partition)["evaluation"]["severity"] == "WARN"
    behind = [_check(base, "pages_changed_since_read", k)["evaluation"] for k in STALE_GRAPH_KEYS]
    assert [b["success"] for b in behind] == [True, False, False, False, False]
    assert [e["intValue"] for b in behind for e in b["metadataEntries"] if e["label"] == "count"] == [0, 8, 12, 14, 21]


def test_the_browser_shows_the_asset_graph_and_each_partitions_checks(ui):
    with _browser() as (page, expect):
        # The global lineage shows the study's stages as asset groups ...
        page.goto(ui["base"] + "/asset-groups")
        for group in ("world", "pages", "graph", "evaluation", "maintenance", "reports"):
            expect(page.get_by_text(group, exact=True).last).to_be_visible()
        page.screenshot(path=ARTIFACTS / "stages.png")
        # ... and a stage's page shows its assets.
        page.goto(ui["base"] + "/locations/driftlab_dagster/asset-groups/graph")
        for name in ("extraction_log", "fact_graph"):
            expect(page.locator(f'foreignObject [data-tooltip="{name}"]')).to_be_visible()
        # Live data has arrived: after `make run` one of fact_graph's three checks passes on every partition.
        expect(page.locator("foreignObject").get_by_text("1 / 3 Passed")).to_be_visible()
        page.screenshot(path=ARTIFACTS / "asset-graph.png")
    _screenshots(ui["base"], "after-make-run", failed=4)
    assert (ARTIFACTS / "asset-graph.png").stat().st_size > 10_000


def _finished(base: str, launched: dict) -> str:
    """The backfill's status once it stopped (at most 600 s)."""
    assert launched["__typename"] == "LaunchBackfillSuccess", launched
    deadline = time.monotonic() + 600
    while True:
        status = graphql(base, """query($id: String!) { partitionBackfillOrError(backfillId: $id) {
            ... on PartitionBackfill { status } } }""",
                         {"id": launched["backfillId"]})["partitionBackfillOrError"]["status"]
        if status.startswith("COMPLETED") or status in ("FAILED", "CANCELED"):
            return status
        assert time.monotonic() < deadline, f"backfill still {status} after 600 s"
        time.sleep(2)


def _catalog_backfill(base: str, keys: list[str]) -> str:
    """What the Catalog's *Materialize…* launches for these partitions of the study's assets: its status."""
    launched = graphql(base, """mutation($keys: [String!]!) { launchPartitionBackfill(backfillParams: {
        assetSelection: [{path: ["tessaly_freight", "pages"]}, {path: ["tessaly_freight", "extraction_log"]},
                         {path: ["tessaly_freight", "fact_graph"]}, {path: ["tessaly_freight", "governed_graph"]},
                         {path: ["tessaly_freight", "answers"]}],
        partitionNames: $keys}) { __typename ... on LaunchBackfillSuccess { backfillId } """
                       """... on PythonError { message } } }""", {"keys": keys})["launchPartitionBackfill"]
    return _finished(base, launched)


def _step_failures(base: str, run_id: str) -> list[str]:
    run = graphql(base, """query($id: ID!) { runOrError(runId: $id) { ... on Run { eventConnection {
        events { __typename ... on ExecutionStepFailureEvent { error { message } } } } } } }""",
                  {"id": run_id})["runOrError"]
    events = run["eventConnection"]["events"]
    return [e["error"]["message"] for e in events if e["__typename"] == "ExecutionStepFailureEvent"]


def test_a_backfill_from_the_jobs_page_is_refused_before_it_writes_one_partition_for_many(ui):
    # The study job's page, Partitions, *Launch backfill*: Dagster 1.13 launches one run with the range's
    # tags and its first partition's own tags, and runs that first partition alone. The run must say so and
    # write nothing, not report success for the partitions it skipped.
    base = ui["base"]
    keys = [str(dg.MultiPartitionKey({"scenario": "StalePages", "day": d})) for d in DAYS[:2]]
    before = {k: _metadata(base, "fact_graph", k)["runId"] for k in keys}
    launched = graphql(base, """mutation($keys: [String!]!) { launchPartitionBackfill(backfillParams: {
        selector: {partitionSetName: "tessaly_freight__study_partition_set",
                   repositorySelector: {repositoryLocationName: "driftlab_dagster", repositoryName: "__repository__"}},
        partitionNames: $keys, fromFailure: false}) { __typename ... on LaunchBackfillSuccess { backfillId } """
                       """... on PythonError { message } } }""", {"keys": keys})["launchPartitionBackfill"]
    assert _finished(base, launched) != "COMPLETED_SUCCESS"
    runs = graphql(base, """query($id: String!) { partitionBackfillOrError(backfillId: $id) {
        ... on PartitionBackfill { runs(limit: 10) { runId status jobName } } } }""",
                   {"id": launched["backfillId"]})["partitionBackfillOrError"]["runs"]
    assert runs and {r["status"] for r in runs} == {"FAILURE"}
    assert {r["jobName"] for r in runs} == {f"{W}__study"}
    failures = [m for r in runs for m in _step_failures(base, r["runId"])]
    assert failures and all("Launch the backfill from the Catalog" in m for m in failures), failures
    assert {k: _metadata(base, "fact_graph", k)["runId"] for k in keys} == before

    # The route the message names writes them, each with its check results.
    assert _catalog_backfill(base, keys) == "COMPLETED_SUCCESS"
    for key in keys:
        latest = _metadata(base, "fact_graph", key)
        assert latest["runId"] != before[key]
        assert _check(base, "pages_changed_since_read", key)["runId"] == latest["runId"]


def test_a_backfill_of_one_scenario_then_an_extractor_change(ui):
    base = ui["base"]
    before = {k: _metadata(base, "fact_graph", k)["runId"] for k in STALE_GRAPH_KEYS + ["2026-09-29|Fresh"]}
    assert _catalog_backfill(base, STALE_GRAPH_KEYS) == "COMPLETED_SUCCESS"

    # Only the backfilled scenario was materialised again, each partition with its own numbers and checks.
    after = {k: _metadata(base, "fact_graph", k) for k in STALE_GRAPH_KEYS + ["2026-09-29|Fresh"]}
    assert all(after[k]["runId"] != before[k] for k in STALE_GRAPH_KEYS)
    assert after["2026-09-29|Fresh"]["runId"] == before["2026-09-29|Fresh"]
    for k in STALE_GRAPH_KEYS:
        assert after[k]["dagster/row_count"] == _rows(ui["work"], "facts", k)
        assert _check(base, "pages_changed_since_read", k)["runId"] == after[k]["runId"]
    assert _stale(base, STALE_GRAPH_KEYS) == ["FRESH"] * 5
    assert _check(base, "pages_changed_since_read", STALE_GRAPH_KEYS[-1])["evaluation"]["success"] is False
    _screenshots(base, "after-backfill", failed=4)

    # Switch the extractor in the settings file and reload the code location.
    ui["settings"].write_text(SETTINGS.format(work=ui["work"], extractor="model"))
    reloaded = graphql(base, """mutation { reloadRepositoryLocation(repositoryLocationName: "driftlab_dagster") {
        __typename ... on WorkspaceLocationEntry { loadStatus } } }""")["reloadRepositoryLocation"]
    assert reloaded["__typename"] == "WorkspaceLocationEntry"
    deadline = time.monotonic() + 120
    while _stale(base, STALE_GRAPH_KEYS) != ["STALE"] * 5:
        assert time.monotonic() < deadline, "the graph did not go stale after the extractor changed"
        time.sleep(1)
    query = """query($keys: [String!]!) { assetNodeOrError(assetKey: {path: ["tessaly_freight", "fact_graph"]}) {
        ... on AssetNode { staleCausesByPartition(partitions: $keys) { category reason } } } }"""
    causes = graphql(base, query, {"keys": STALE_GRAPH_KEYS[:1]})["assetNodeOrError"]["staleCausesByPartition"][0]
    assert {c["category"] for c in causes} == {"CODE"}


@contextmanager
def _browser():
    playwright = pytest.importorskip("playwright.sync_api")
    assert os.path.exists(CHROMIUM), "Debian's chromium is not installed: apt-get install -y chromium"
    playwright.expect.set_options(timeout=30_000)  # live data can take one more 6 s poll to arrive
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROME_ARGS)
        try:
            yield browser.new_context(viewport={"width": 1400, "height": 900}).new_page(), playwright.expect
        finally:
            browser.close()


def _screenshots(base: str, label: str, failed: int) -> None:
    """What a person sees: one check's result for every partition (the unmaintained graph falls behind from
    the first event on), and one partition's own materialisation."""
    with _browser() as (page, expect):
        page.goto(base + f"/assets/{W}/fact_graph?view=checks&checkDetail=pages_changed_since_read")
        expect(page.get_by_text("pages_changed_since_read", exact=True).first).to_be_visible()
        page.get_by_text("Partitions", exact=True).last.click()
        expect(page.get_by_text(f"Failed ({failed})", exact=True)).to_be_visible()
        expect(page.get_by_text(f"Passed ({20 - failed})", exact=True)).to_be_visible()
        page.screenshot(path=ARTIFACTS / f"fact-graph-checks-{label}.png")
        page.goto(base + f"/assets/{W}/fact_graph?view=partitions&partition=2026-09-29%7CStaleGraph")
        expect(page.get_by_text("2026-09-29|StaleGraph", exact=True).first).to_be_visible()
        expect(page.get_by_text("pages_with_extraction_issues", exact=True)).to_be_visible()
        page.screenshot(path=ARTIFACTS / f"fact-graph-partition-{label}.png")
