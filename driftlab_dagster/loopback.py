"""HTTP servers in this process on a free loopback port: the base of the stand-in servers the tests and
benchmarks talk to over real HTTP (the loopback model server, the Ollama adapter)."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def free_port() -> int:
    """A loopback port nothing listens on now (the OS's choice)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ThreadedLoopbackServer:
    """An HTTP server on a free loopback port (`url`), answering from a daemon thread while its `with` block
    runs. A subclass builds its handler and calls `_listen` in its own __init__."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"

    def _listen(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._http = ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    def __enter__(self) -> Any:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()
