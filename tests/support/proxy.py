"""A TCP proxy on loopback that a test can cut and restore: a real outage of the server
behind it (DynamoDB Local), with nothing in the client patched."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

from tests.support.processes import HOST

__all__ = ["Proxy", "proxy"]


class Proxy:
    def __init__(self, upstream_port: int) -> None:
        self._upstream = upstream_port
        self._listener = socket.create_server((HOST, 0))
        self.port: int = self._listener.getsockname()[1]
        self._cut = threading.Event()
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self) -> None:
        """Drop every connection and refuse new ones (they are closed at once)."""
        self._cut.set()
        with self._lock:
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self._sockets.clear()

    def restore(self) -> None:
        self._cut.clear()

    def close(self) -> None:
        self._closed.set()
        self.cut()
        self._listener.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self._cut.is_set():
                client.close()
                continue
            try:
                server = socket.create_connection((HOST, self._upstream))
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets.update((client, server))
            for source, target in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, target), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                target.sendall(data)
        for sock in (source, target):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


@contextlib.contextmanager
def proxy(upstream_port: int) -> Iterator[Proxy]:
    running = Proxy(upstream_port)
    try:
        yield running
    finally:
        running.close()
