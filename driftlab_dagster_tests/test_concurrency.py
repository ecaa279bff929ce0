"""Model calls in flight (`--concurrency k`): the extractor and the reader keep up to k calls at the server at
once, and the run records the same rows, byte for byte, as one call at a time; a broken server still stops the run with
the failure streak's one line. The command runs in this process against a loopback OpenAI-compatible server
(driftlab_dagster/loopback_server.py) with the real `openai` client, a real Dagster run and a real DuckDB file."""

from __future__ import annotations

import duckdb
import pytest

from driftlab_dagster import cli
from driftlab_dagster.core import clients
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster.loopback import free_port
from driftlab_dagster.loopback_server import LoopbackModelServer
from driftlab_dagster.project import DEFAULT_WORLD

pytestmark = pytest.mark.dagster


@pytest.fixture
def run(capsys, monkeypatch):
    for name in ("DAGSTER_HOME", "DRIFTLAB_WORLD", "DRIFTLAB_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(cli, "pace_for_batch", lambda: None)
    monkeypatch.setattr(clients, "BACKOFF_SECONDS", 0.01)

    def go(url: str, out, k: int) -> tuple[int, str]:
        capsys.readouterr()
        code = cli.main(["run", "--extractor", "model", "--reader", "model", "--api", "openai", "--url", url,
                         "--model", "fake-model", "--timeout", "5", "--database", str(out / "d.duckdb"),
                         "--out", str(out), "--scenario", "Fresh", "--until", "2026-09-08",
                         "--concurrency", str(k)])
        return code, capsys.readouterr().err

    return go


def _rows(out) -> dict[str, list[tuple]]:
    with duckdb.connect(str(out / "d.duckdb"), read_only=True) as conn:
        return {table: conn.execute(f"SELECT * EXCLUDE (run_id) FROM {table} ORDER BY ALL").fetchall()
                if "run_id" in [c[0] for c in conn.execute(f"DESCRIBE {table}").fetchall()]
                else conn.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
                for table in ("facts", "answers", "extraction_log")}


@pytest.fixture(scope="module")
def ontology():
    return load_world(DEFAULT_WORLD).ontology


def test_k_calls_in_flight_give_the_rows_of_one_at_a_time(ontology, tmp_path, run):
    seen = {}
    for k in (1, 8):
        out = tmp_path / f"k{k}"
        out.mkdir()
        with LoopbackModelServer(ontology, latency=0.05) as server:
            code, err = run(server.url, out, k)
            seen[k] = server.most_in_flight, server.most_reader_in_flight
        assert code == 0, err
    assert seen[1] == (1, 1)
    assert 1 < seen[8][0] <= 8
    assert 1 < seen[8][1] <= 8  # the reader's calls too, not only the extractor's
    assert (tmp_path / "k1" / "tessaly_freight" / "results.csv").read_bytes() == \
           (tmp_path / "k8" / "tessaly_freight" / "results.csv").read_bytes()
    assert _rows(tmp_path / "k1") == _rows(tmp_path / "k8")


def test_a_broken_server_still_stops_the_run_in_one_line_with_calls_in_flight(ontology, tmp_path, run):
    with LoopbackModelServer(ontology, "error500") as server:
        code, err = run(server.url, tmp_path, 8)
        requests = server.chat_requests
    assert code == 2
    assert err.count("\n") == 1 and "model calls to" in err and "HTTP 500" in err
    # At most one window of 4k calls reaches the dead server, each tried at most 2 + 3 times.
    assert requests <= 4 * 8 * (2 + 3)


def test_calls_in_flight_spread_over_several_servers_with_the_rows_of_one(ontology, tmp_path, run):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir(), two.mkdir()
    with LoopbackModelServer(ontology, latency=0.05) as server:
        code, err = run(server.url, one, 1)
    assert code == 0, err
    with LoopbackModelServer(ontology, latency=0.05) as a, LoopbackModelServer(ontology, latency=0.05) as b:
        code, err = run(f"{a.url},{b.url}", two, 4)
        shares = a.chat_requests, b.chat_requests
    assert code == 0, err
    assert min(shares) > 0.25 * sum(shares), shares  # both servers read, neither idles
    results = [out / "tessaly_freight" / "results.csv" for out in (one, two)]
    assert results[0].read_bytes() == results[1].read_bytes()
    assert _rows(one) == _rows(two)


def test_a_server_of_several_that_is_down_is_named_before_anything_is_read(ontology, tmp_path, run):
    down = f"http://127.0.0.1:{free_port()}"
    with LoopbackModelServer(ontology) as server:
        code, err = run(f"{server.url},{down}", tmp_path, 2)
        asked = server.chat_requests
    assert code == 2
    assert err.count("\n") == 1 and down in err, err
    assert asked == 0
