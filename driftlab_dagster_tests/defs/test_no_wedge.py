"""A run that died never blocks the next: `kill -9` of `driftlab run` while it holds the DuckDB pool, then a
rerun against the same Dagster home and DuckDB file finishes and matches the oracle, also right after the kill
(a zombie not yet reaped is dead) and when the holder dies while the rerun waits. Ctrl-C stops a run, and in
a terminal shows only DriftLab's one line.

Real processes, a real on-disk instance with the project's dagster.yaml (pool limit 1), a real DuckDB file.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import dagster as dg
import pytest

from driftlab_dagster.core.reports import results_csv
from driftlab_dagster.core.study import run_study
from driftlab_dagster.project import PROJECT_ROOT

pytestmark = pytest.mark.system

TIMEOUT = 300


def _start(home, out) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("DRIFTLAB_WORLD", "DRIFTLAB_CONFIG")}
    env["DAGSTER_HOME"] = str(home)
    return subprocess.Popen([sys.executable, "-m", "driftlab_dagster", "run", "--database", str(out / "d.duckdb"),
                             "--out", str(out), "--pool-wait", "20"], env=env, cwd=PROJECT_ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(PROJECT_ROOT / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    return home


def _wait_until(condition, what: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.02)


def test_a_run_killed_while_holding_the_pool_does_not_wedge_the_next(home, tmp_path, world):
    out = tmp_path / "out"
    victim = _start(home, out)
    instance = dg.DagsterInstance.get()
    _wait_until(lambda: (victim.poll() is not None
                         or instance.event_log_storage.get_concurrency_info("duckdb").claimed_slots),
                "the run to claim the duckdb pool")
    assert victim.poll() is None, "the run finished before it could be killed"
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    [dead] = instance.get_runs(filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED]))
    assert instance.event_log_storage.get_concurrency_info("duckdb").claimed_slots  # the dead run still holds it

    rerun = _start(home, out)
    stdout, stderr = rerun.communicate(timeout=TIMEOUT)
    assert rerun.returncode == 0, stderr
    assert f"run {dead.run_id[:8]} had died without finishing" in stdout
    assert instance.get_run_by_id(dead.run_id).status == dg.DagsterRunStatus.FAILURE
    assert not instance.event_log_storage.get_concurrency_info("duckdb").claimed_slots
    assert (out / "tessaly_freight" / "results.csv").read_text() == results_csv(run_study(world).results)


def test_a_live_run_holding_the_pool_is_named_and_waited_for_boundedly(home, tmp_path):
    instance = dg.DagsterInstance.get()
    # A run launched elsewhere (the UI, the daemon), still going, holds the pool's only slot.
    run = instance.add_run(dg.DagsterRun(job_name="a_ui_run", run_id="0123456789abcdef0123456789abcdef",
                                         status=dg.DagsterRunStatus.STARTED))
    instance.event_log_storage.initialize_concurrency_limit_to_default("duckdb")
    claim = instance.event_log_storage.claim_concurrency_slot("duckdb", run.run_id, "some_step")
    assert claim.is_claimed
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "driftlab_dagster", "run", "--database", str(tmp_path / "d.duckdb"),
                           "--out", str(tmp_path), "--pool-wait", "2"], capture_output=True, text=True,
                          cwd=PROJECT_ROOT, timeout=TIMEOUT,
                          env={**{k: v for k, v in os.environ.items() if k != "DRIFTLAB_WORLD"},
                               "DAGSTER_HOME": str(home)})
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "the duckdb pool is held by run 01234567 (a_ui_run, STARTED) for more than 2s" in done.stderr
    assert time.monotonic() - started < TIMEOUT


def test_ctrl_c_stops_a_headless_run_and_the_next_run_completes(home, tmp_path, world):
    out = tmp_path / "out"
    running = _start(home, out)
    instance = dg.DagsterInstance.get()
    _wait_until(lambda: running.poll() is not None or instance.get_runs(
        filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED])), "the run to start")
    running.send_signal(signal.SIGINT)
    _, stderr = running.communicate(timeout=60)
    assert running.returncode != 0
    assert "interrupted" in stderr
    rerun = _start(home, out)
    _, stderr = rerun.communicate(timeout=TIMEOUT)
    assert rerun.returncode == 0, stderr
    assert (out / "tessaly_freight" / "results.csv").read_text() == results_csv(run_study(world).results)


def _held_by_a_process(instance: dg.DagsterInstance, process: subprocess.Popen) -> dg.DagsterRun:
    """A headless run, as `driftlab run` tags it, whose process is `process`, holding the pool's only slot."""
    from driftlab_dagster.headless import HOST_TAG, PID_TAG, START_TAG, _process_start

    tags = {PID_TAG: str(process.pid), HOST_TAG: socket.gethostname(), START_TAG: _process_start(process.pid)}
    run = instance.add_run(dg.DagsterRun(job_name="tessaly_freight__study", run_id="fedcba9876543210fedcba9876543210",
                                         status=dg.DagsterRunStatus.STARTED, tags=tags))
    instance.event_log_storage.initialize_concurrency_limit_to_default("duckdb")
    assert instance.event_log_storage.claim_concurrency_slot("duckdb", run.run_id, "some_step").is_claimed
    return run


def test_a_run_killed_a_moment_ago_and_not_yet_reaped_is_taken_for_dead(home):
    """Issue 21, item 18: a process killed with SIGKILL stays a zombie until its parent reaps it, and
    kill(pid, 0) still finds it; the rerun waited the whole --pool-wait and blamed the dead run."""
    from driftlab_dagster.headless import prepare_instance

    instance = dg.DagsterInstance.get()
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        run = _held_by_a_process(instance, victim)
        os.kill(victim.pid, signal.SIGKILL)
        _wait_until(lambda: open(f"/proc/{victim.pid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z",
                    "the killed child to become a zombie", 10)
        said: list[str] = []
        started = time.monotonic()
        prepare_instance(instance, 5, said.append)  # raised "the duckdb pool is held by run fedcba98" after 5 s
        assert time.monotonic() - started < 3
        assert said == [f"run {run.run_id[:8]} had died without finishing: marked failed, its DuckDB pool slot freed"]
        assert instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.FAILURE
    finally:
        victim.kill()
        victim.wait()


def test_a_holder_that_dies_while_the_rerun_waits_is_noticed_without_waiting_it_out(home):
    """Issue 21, item 18: the wait loop looked at the pool only, never again at whether its holder lived."""
    from driftlab_dagster.headless import prepare_instance

    instance = dg.DagsterInstance.get()
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        run = _held_by_a_process(instance, victim)
        killer = threading.Timer(1.0, lambda: (victim.kill(), victim.wait()))
        killer.start()
        said: list[str] = []
        started = time.monotonic()
        prepare_instance(instance, 20, said.append)
        killer.join()
        assert time.monotonic() - started < 10
        assert said[0].startswith("waiting up to 20s for run fedcba98")
        assert said[-1] == f"run {run.run_id[:8]} had died without finishing: marked failed, its DuckDB pool slot freed"
    finally:
        victim.kill()
        victim.wait()


def test_ctrl_c_in_a_terminal_during_a_model_run_prints_only_the_clean_line(home, tmp_path, world):
    """Issue 21, item 6: Ctrl-C reaches the whole foreground process group, and Dagster's compute-log helpers
    (an orphan watcher per stream, a Python each) printed two interleaved KeyboardInterrupt tracebacks before
    DriftLab's own line. The command runs in a process group of its own, which is sent SIGINT as a terminal
    sends it; a loopback model server keeps it busy with model calls."""
    from driftlab_dagster.loopback_server import LoopbackModelServer

    env = {k: v for k, v in os.environ.items() if k not in ("DRIFTLAB_WORLD", "DRIFTLAB_CONFIG")}
    env["DAGSTER_HOME"] = str(home)
    with LoopbackModelServer(world.ontology, "healthy") as server:
        running = subprocess.Popen(
            [sys.executable, "-m", "driftlab_dagster", "run", "--extractor", "model", "--reader", "model", "--api",
             "openai", "--url", server.url, "--model", "fake-model", "--database", str(tmp_path / "d.duckdb"),
             "--out", str(tmp_path)], env=env, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, start_new_session=True)
        _wait_until(lambda: running.poll() is not None or server.chat_requests >= 20, "model calls", TIMEOUT)
        assert running.poll() is None, running.communicate()[1]
        os.killpg(running.pid, signal.SIGINT)
        _, stderr = running.communicate(timeout=120)
    assert running.returncode == 130, stderr
    assert stderr.splitlines() == ["driftlab: interrupted; partitions that finished are kept, the one in progress "
                                   "was rolled back"], stderr
