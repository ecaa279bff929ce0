"""A real PostgreSQL-backed Dagster instance on this machine: the server Debian ships, its data folder inside
the project's ignored state (`.state/postgres/`), listening on loopback only; a `dagster.yaml` whose run,
event-log and schedule storage live in it; and the webserver and the daemon started on that instance.

    python -m driftlab_dagster.local_postgres up     # what `make pg-up` runs
    python -m driftlab_dagster.local_postgres down   # what `make pg-down` runs

`up` is idempotent (a running server is reused, a stopped one restarted, its data kept); `down` stops the
webserver, the daemon and the server, and keeps the data folder (delete `.state/` to start over). The same
`dagster.yaml` points at a managed PostgreSQL by changing its `postgres_db` block: see deploy/README.md.

PostgreSQL refuses to run as root; as root (a container, CI) the server runs as the `postgres` user, which
then owns the data folder.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml

from driftlab_dagster.core.errors import UserError
from driftlab_dagster.loopback import free_port
from driftlab_dagster.processes import runs
from driftlab_dagster.project import EVENT_BATCH_SIZE, PROJECT_ROOT

DEFAULT_STATE = PROJECT_ROOT / ".state"
DEFAULT_PORT = 5433  # not 5432, so a system server on the default port is left alone
DATABASE = "dagster"
ROLE = "driftlab"


class PostgresError(UserError):
    """The local PostgreSQL server could not be set up or started."""


@dataclass(frozen=True)
class LocalPostgres:
    """One local server: where its files live and where it listens."""

    state: Path = DEFAULT_STATE
    port: int = DEFAULT_PORT
    ui_port: int = 3001

    @property
    def data(self) -> Path:
        return self.state / "postgres" / "data"

    @property
    def home(self) -> Path:
        """The DAGSTER_HOME whose dagster.yaml keeps Dagster's storage in this server."""
        return self.state / "dagster_home"

    @property
    def log(self) -> Path:
        return self.state / "postgres" / "server.log"

    def url(self, database: str = DATABASE) -> str:
        return f"postgresql://{ROLE}@127.0.0.1:{self.port}/{database}"


def server_binaries() -> Path:
    """The folder holding initdb, pg_ctl and postgres: Debian keeps them off PATH, under
    /usr/lib/postgresql/<version>/bin."""
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[-3]))
    if versions:
        return Path(versions[-1]).parent
    raise PostgresError("PostgreSQL's server programs (initdb, pg_ctl) are not installed: on Debian or Ubuntu "
                        "run `apt-get install postgresql`, then `make pg-up` again")


def _as_server_user(command: list[str]) -> list[str]:
    # The server refuses to start as root; a root shell hands the server's commands to the `postgres` user.
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", "postgres", "--", *command]


def _run(command: list[str], what: str) -> str:
    done = subprocess.run(_as_server_user(command), capture_output=True, text=True)
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise PostgresError(f"{what} failed: {detail[-1] if detail else f'exit {done.returncode}'}")
    return done.stdout


def running(pg: LocalPostgres) -> bool:
    if not (pg.data / "PG_VERSION").exists():
        return False
    status = subprocess.run(_as_server_user([str(server_binaries() / "pg_ctl"), "status", "-D", str(pg.data)]),
                            capture_output=True, text=True)
    return status.returncode == 0


def start_server(pg: LocalPostgres) -> None:
    """Initialise the data folder once, then start the server on 127.0.0.1:port (reusing a running one)."""
    bin_dir = server_binaries()
    pg.data.parent.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(pg.data.parent, user="postgres", group="postgres")
    if not (pg.data / "PG_VERSION").exists():
        # Trust on loopback only: the server listens nowhere else and its files are the project's own.
        _run([str(bin_dir / "initdb"), "-D", str(pg.data), "-U", ROLE, "--auth=trust", "--encoding=UTF8",
              "--no-instructions"], "initdb")
    if running(pg):
        return
    options = f"-p {pg.port} -k {pg.data.parent} -c listen_addresses=127.0.0.1 -c max_connections=200"
    _run([str(bin_dir / "pg_ctl"), "start", "-D", str(pg.data), "-l", str(pg.log), "-w", "-t", "60", "-o", options],
         f"starting PostgreSQL on 127.0.0.1:{pg.port} (its log: {pg.log})")
    exists = _run(["psql", "-h", "127.0.0.1", "-p", str(pg.port), "-U", ROLE, "-d", "postgres", "-tAc",
                   f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE}'"], "psql")
    if exists.strip() != "1":
        _run(["createdb", "-h", "127.0.0.1", "-p", str(pg.port), "-U", ROLE, DATABASE], "createdb")


def stop_server(pg: LocalPostgres) -> None:
    if running(pg):
        _run([str(server_binaries() / "pg_ctl"), "stop", "-D", str(pg.data), "-m", "fast", "-w"], "stopping PostgreSQL")


def instance_settings(pg: LocalPostgres, base: Path = PROJECT_ROOT / "dagster.yaml",
                      database: str = DATABASE) -> dict:
    """The project's instance settings (pools, run monitoring, no telemetry) with run, event-log and schedule
    storage in `database` on the local server."""
    settings = yaml.safe_load(base.read_text(encoding="utf-8")) or {}
    # The driver is named: SQLAlchemy 2.1 takes psycopg 3 for a bare postgresql:// URL, whose server-side
    # parameters break dagster-postgres's `NOTIFY run_events, %(id)s` (it is written for psycopg2).
    url = pg.url(database).replace("postgresql://", "postgresql+psycopg2://")
    settings["storage"] = {"postgres": {"postgres_url": url}}
    return settings


def write_instance(pg: LocalPostgres) -> Path:
    pg.home.mkdir(parents=True, exist_ok=True)
    path = pg.home / "dagster.yaml"
    header = (f"# Written by `make pg-up` (driftlab_dagster/local_postgres.py): the project's dagster.yaml with "
              f"storage in\n# the local PostgreSQL at {pg.url()}. Rewritten on every `make pg-up`.\n")
    path.write_text(header + yaml.safe_dump(instance_settings(pg), sort_keys=False), encoding="utf-8")
    return path


# ----- the webserver and the daemon on that instance -----

SERVICES = {
    "webserver": lambda pg, bin_dir: [str(bin_dir / "dagster-webserver"), "-w", "workspace.yaml", "-h", "127.0.0.1",
                                      "-p", str(pg.ui_port)],
    "daemon": lambda pg, bin_dir: [str(bin_dir / "dagster-daemon"), "run", "-w", "workspace.yaml"],
}


def _pid_file(pg: LocalPostgres, name: str) -> Path:
    return pg.state / f"{name}.pid"


def start_services(pg: LocalPostgres, env: dict[str, str] | None = None) -> dict[str, int]:
    """Start the webserver and the daemon on the PostgreSQL instance, each in its own process group (so `down`
    takes their children with them); a service already running is left as it is."""
    bin_dir = Path(sys.executable).parent
    environment = dict(env or os.environ, DAGSTER_HOME=str(pg.home))
    # The runs they launch store a step's materialisations in batches, as headless runs do.
    environment.setdefault("DAGSTER_EVENT_BATCH_SIZE", EVENT_BATCH_SIZE)
    pids = {}
    for name, command in SERVICES.items():
        pid_file = _pid_file(pg, name)
        if pid_file.exists() and runs(int(pid_file.read_text())):
            pids[name] = int(pid_file.read_text())
            continue
        with open(pg.state / f"{name}.log", "ab") as log:
            process = subprocess.Popen(command(pg, bin_dir), cwd=PROJECT_ROOT, env=environment, stdout=log,
                                       stderr=subprocess.STDOUT, start_new_session=True)
        pid_file.write_text(str(process.pid))
        pids[name] = process.pid
    return pids


def stop_services(pg: LocalPostgres, grace: float = 20.0) -> None:
    for name in SERVICES:
        pid_file = _pid_file(pg, name)
        if not pid_file.exists():
            continue
        pid = int(pid_file.read_text())
        if runs(pid):
            try:
                os.killpg(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            deadline = time.monotonic() + grace
            while runs(pid) and time.monotonic() < deadline:
                time.sleep(0.2)
            if runs(pid):
                os.killpg(pid, signal.SIGKILL)
        pid_file.unlink()


def up(pg: LocalPostgres, services: bool = True) -> None:
    start_server(pg)
    path = write_instance(pg)
    print(f"PostgreSQL: {pg.url()} (data in {pg.data})")
    print(f"Dagster instance: {path}")
    if services:
        pids = start_services(pg)
        print(f"webserver (pid {pids['webserver']}): http://127.0.0.1:{pg.ui_port}; daemon (pid {pids['daemon']}); "
              f"logs in {pg.state}/")
        print(f"runs from the command line: DAGSTER_HOME={pg.home} .venv/bin/driftlab run   (or `make pg-run`)")


def down(pg: LocalPostgres) -> None:
    stop_services(pg)
    stop_server(pg)
    print(f"stopped; the data stays in {pg.data} (delete {pg.state} to start over)")


@contextmanager
def throwaway(services: bool = False) -> Iterator[LocalPostgres]:
    """A server on free ports in a new temporary folder, with its instance file (and, with `services`, the
    webserver and the daemon), stopped and deleted afterwards: for tests and benchmarks. The folder is readable
    beyond root, as the server runs as `postgres` when this runs as root (so not pytest's tmp_path)."""
    state = Path(tempfile.mkdtemp(prefix="driftlab-pg-"))
    state.chmod(0o755)
    pg = LocalPostgres(state, free_port(), free_port())
    try:
        up(pg, services)
        yield pg
    finally:
        down(pg)
        shutil.rmtree(state, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m driftlab_dagster.local_postgres", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=["up", "down", "server"],
                        help="up: server, instance file, webserver and daemon; server: the server and the instance "
                             "file only; down: stop everything")
    parser.add_argument("--state", type=Path, default=DEFAULT_STATE, help="where the data and pid files live")
    parser.add_argument("--port", type=int, default=int(os.environ.get("DRIFTLAB_PG_PORT", DEFAULT_PORT)))
    parser.add_argument("--ui-port", type=int, default=3001)
    args = parser.parse_args(argv)
    pg = LocalPostgres(args.state.resolve(), args.port, args.ui_port)
    try:
        if args.action == "down":
            down(pg)
        else:
            up(pg, services=args.action == "up")
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
