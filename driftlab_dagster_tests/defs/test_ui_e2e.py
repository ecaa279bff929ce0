"""The study as a person meets it in `dagster dev`: a real webserver and daemon on loopback with a temporary
DAGSTER_HOME, driven through GraphQL (load, list, backfill one scenario, staleness and checks before and
after an extractor change) and through headless Chromium (the asset graph and a partition's checks).

Needs Debian's chromium (`.ci/run` installs it). Everything started here is stopped at the end, and the
test fails if any process of the group is left.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import dagster as dg
import pytest

from driftlab_dagster.defs.partitions import DAYS
from driftlab_dagster.project import PROJECT_ROOT
from driftlab_dagster_tests.support.local_model import free_port

pytestmark = pytest.mark.ui

ARTIFACTS = PROJECT_ROOT / "driftlab_dagster_tests" / "artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROME_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]
STALE_GRAPH_KEYS = [str(dg.MultiPartitionKey({"scenario": "StaleGraph", "day": d})) for d in DAYS]


def graphql(base: str, query: str, variables: dict | None = None) -> dict:
    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    request = urllib.request.Request(base + "/graphql", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        data = json.loads(response.read())
    assert "errors" not in data, data["errors"]
    return data["data"]


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


@pytest.fixture(scope="module")
def ui(tmp_path_factory):
    home = tmp_path_factory.mktemp("dagster_home")
    (home / "dagster.yaml").write_text(
        (PROJECT_ROOT / "dagster.yaml").read_text() + "nux:\n  enabled: false\n")
    work = tmp_path_factory.mktemp("ui_study")
    settings = work / "study.yaml"
    settings.write_text("extractor: regex\n")
    env = {k: v for k, v in os.environ.items() if k != "DRIFTLAB_WORLD"}
    env.update(DAGSTER_HOME=str(home), DRIFTLAB_STUDY=str(settings), DRIFTLAB_DATABASE=str(work / "ui.duckdb"),
               DRIFTLAB_OUTPUT_DIR=str(work))
    # The world first, as a user would click it: the backfill below needs it.
    seed = "import dagster as dg; from driftlab_dagster.definitions import defs; d = defs(); " \
           "dg.materialize(list(d.assets), selection=['world'], resources=d.resources, instance=dg.DagsterInstance.get())"
    subprocess.run([sys.executable, "-c", seed], env=env, cwd=PROJECT_ROOT, check=True, timeout=300)
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
    yield {"base": base, "entries": entries, "settings": settings, "work": work}
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
    node = graphql(base, """query($keys: [String!]!) { assetNodeOrError(assetKey: {path: ["fact_graph"]}) {
        ... on AssetNode { staleStatusByPartition(partitions: $keys) } } }""", {"keys": keys})
    return node["assetNodeOrError"]["staleStatusByPartition"]


def _check(base: str, name: str, partition: str) -> dict:
    executions = graphql(base, """query($name: String!, $partition: String) {
        assetCheckExecutions(assetKey: {path: ["fact_graph"]}, checkName: $name, partition: $partition, limit: 1) {
          partition status evaluation { success severity } } }""", {"name": name, "partition": partition})
    return executions["assetCheckExecutions"][0]


def test_the_code_location_loads_and_lists_the_study(ui):
    assert [(e["name"], e["locationOrLoadError"]["__typename"]) for e in ui["entries"]] == [
        ("driftlab_dagster", "RepositoryLocation")]
    nodes = graphql(ui["base"], """{ assetNodes { assetKey { path } groupName isPartitioned
        partitionKeysByDimension { name partitionKeys } } }""")["assetNodes"]
    by_name = {n["assetKey"]["path"][-1]: n for n in nodes}
    assert set(by_name) >= {"world", "pages", "extraction_log", "fact_graph", "answers", "maintenance_costs",
                            "graph_repair", "accuracy_report", "cost_report"}
    dims = {d["name"]: d["partitionKeys"] for d in by_name["fact_graph"]["partitionKeysByDimension"]}
    assert dims == {"day": DAYS, "scenario": ["Fresh", "StalePages", "StaleGraph", "PartialPages"]}
    assert by_name["fact_graph"]["groupName"] == "graph"


def test_a_backfill_of_one_scenario_then_an_extractor_change(ui):
    base = ui["base"]
    launched = graphql(base, """mutation($keys: [String!]!) { launchPartitionBackfill(backfillParams: {
        assetSelection: [{path: ["pages"]}, {path: ["extraction_log"]}, {path: ["fact_graph"]}, {path: ["governed_graph"]},
                        {path: ["answers"]}],
        partitionNames: $keys}) { __typename ... on LaunchBackfillSuccess { backfillId } ... on PythonError { message } } }""",
                       {"keys": STALE_GRAPH_KEYS})["launchPartitionBackfill"]
    assert launched["__typename"] == "LaunchBackfillSuccess", launched
    deadline = time.monotonic() + 600
    while True:
        status = graphql(base, """query($id: String!) { partitionBackfillOrError(backfillId: $id) {
            ... on PartitionBackfill { status } } }""", {"id": launched["backfillId"]})["partitionBackfillOrError"]["status"]
        if status.startswith("COMPLETED") or status in ("FAILED", "CANCELED"):
            break
        assert time.monotonic() < deadline, f"backfill still {status} after 600 s"
        time.sleep(2)
    assert status == "COMPLETED_SUCCESS"

    # Only the backfilled scenario was materialised; its graph partitions are fresh.
    assert _stale(base, STALE_GRAPH_KEYS) == ["FRESH"] * 5
    fresh_keys = [str(dg.MultiPartitionKey({"scenario": "Fresh", "day": d})) for d in DAYS]
    assert _stale(base, fresh_keys) == ["MISSING"] * 5
    # Drift shows as checks: the stale graph is behind its pages from the rename on, never on day 0.
    assert _check(base, "pages_changed_since_read", STALE_GRAPH_KEYS[0])["evaluation"]["success"] is True
    last = _check(base, "pages_changed_since_read", STALE_GRAPH_KEYS[-1])
    assert last["evaluation"] == {"success": False, "severity": "WARN"}

    # Switch the extractor in the settings file and reload the code location.
    ui["settings"].write_text("extractor: model\nmodel: qwen2.5-coder-0.5b\napi: openai\n")
    reloaded = graphql(base, """mutation { reloadRepositoryLocation(repositoryLocationName: "driftlab_dagster") {
        __typename ... on WorkspaceLocationEntry { loadStatus } } }""")["reloadRepositoryLocation"]
    assert reloaded["__typename"] == "WorkspaceLocationEntry"
    deadline = time.monotonic() + 120
    while _stale(base, STALE_GRAPH_KEYS) != ["STALE"] * 5:
        assert time.monotonic() < deadline, "the graph did not go stale after the extractor changed"
        time.sleep(1)
    causes = graphql(base, """query($keys: [String!]!) { assetNodeOrError(assetKey: {path: ["fact_graph"]}) {
        ... on AssetNode { staleCausesByPartition(partitions: $keys) { category reason } } } }""",
                     {"keys": STALE_GRAPH_KEYS[:1]})["assetNodeOrError"]["staleCausesByPartition"][0]
    assert {c["category"] for c in causes} == {"CODE"}


def test_the_browser_shows_the_asset_graph_and_a_partitions_checks(ui):
    playwright = pytest.importorskip("playwright.sync_api")
    assert os.path.exists(CHROMIUM), "Debian's chromium is not installed: apt-get install -y chromium"
    playwright.expect.set_options(timeout=30_000)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROME_ARGS)
        page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
        # The global lineage shows the study's stages as asset groups ...
        page.goto(ui["base"] + "/asset-groups")
        for group in ("world", "pages", "graph", "evaluation", "maintenance", "reports"):
            playwright.expect(page.get_by_text(group, exact=True).last).to_be_visible()
        page.screenshot(path=ARTIFACTS / "stages.png")
        # ... and a stage's page shows its assets.
        page.goto(ui["base"] + "/locations/driftlab_dagster/asset-groups/graph")
        for name in ("extraction_log", "fact_graph"):
            playwright.expect(page.locator(f'foreignObject [data-tooltip="{name}"]')).to_be_visible()
        page.screenshot(path=ARTIFACTS / "asset-graph.png")
        page.goto(ui["base"] + "/assets/fact_graph?view=checks&checkDetail=pages_changed_since_read")
        playwright.expect(page.get_by_text("pages_changed_since_read", exact=True).first).to_be_visible()
        playwright.expect(page.get_by_text("entity_spelling_splits", exact=True).first).to_be_visible()
        playwright.expect(page.locator('[aria-label="warning_outline"]').first).to_be_visible()
        playwright.expect(page.get_by_text("2026-09-29|StaleGraph").first).to_be_visible()
        page.screenshot(path=ARTIFACTS / "fact-graph-checks.png")
        browser.close()
    assert (ARTIFACTS / "asset-graph.png").stat().st_size > 10_000
