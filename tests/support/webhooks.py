"""A real webhook receiver on loopback, for push-notification tests.

    Receiver    an HTTP(S) server in a background thread: records every request and answers
                as planned (status codes in order, Retry-After, a delay, a redirect), or is
                down (connection refused)
    Authority   a throwaway CA: server contexts for chosen names (and 127.0.0.1), and the
                client context that trusts it

The server runs in its own thread, so it serves async tests in the test's loop and code
that runs its own loop in another thread (a Lambda handler's `asyncio.run`) alike.

    with Receiver() as hook:
        hook.plan(503, Reply(200))
        ... deliver to hook.url("/hook") ...
        first, second = hook.wait_for(2)
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import datetime
import ipaddress
import socket
import ssl
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["Authority", "Received", "Receiver", "Reply"]


@dataclasses.dataclass(frozen=True)
class Reply:
    """How to answer one request: after `delay` seconds, `status` with these headers."""

    status: int = 200
    retry_after: str | None = None
    delay: float = 0.0
    location: str | None = None


@dataclasses.dataclass(frozen=True)
class Received:
    method: str
    target: str  # path and query, as on the request line
    headers: dict[str, str]  # names in lower case
    body: bytes
    at: float  # time.monotonic() when the request had arrived whole
    peer_port: int  # the client's port: the same on requests over one kept-alive connection


class Receiver:
    """A webhook receiver on 127.0.0.1 (plain HTTP, or HTTPS with `tls`, a server context
    such as `Authority().server_context("hook.test")`). Answers `default` unless `plan()`
    queued replies."""

    def __init__(self, *, tls: ssl.SSLContext | None = None, default: Reply = Reply()) -> None:
        self.tls = tls
        self.default = default
        self.port = 0
        self._planned: collections.deque[Reply] = collections.deque()
        self._received: list[Received] = []
        self._changed = threading.Condition()
        self._connections: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def scheme(self) -> str:
        return "https" if self.tls is not None else "http"

    def url(self, path: str = "/hook", host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    def plan(self, *replies: Reply | int) -> None:
        """Answer the next requests with these, in order (an int is a bare status)."""
        with self._changed:
            self._planned.extend(r if isinstance(r, Reply) else Reply(r) for r in replies)

    @property
    def requests(self) -> list[Received]:
        with self._changed:
            return list(self._received)

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        """The requests once at least `count` arrived; AssertionError after `timeout`."""
        with self._changed:
            if not self._changed.wait_for(lambda: len(self._received) >= count, timeout):
                raise AssertionError(f"expected {count} requests within {timeout} s, "
                                     f"got {len(self._received)}")
            return list(self._received)

    # --- up and down -----------------------------------------------------------------------------

    def start(self) -> Receiver:
        self._stopping.clear()
        self._server = _Server(("127.0.0.1", self.port), _Handler, self)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def down(self) -> None:
        """Stop listening and cut open connections: connecting is refused until `start()`
        (which listens on the same port again)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        self._stopping.set()  # wakes delayed answers
        with self._changed:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def stop(self) -> None:
        self.down()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Receiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- called from the server's threads ---------------------------------------------------------

    def _arrived(self, request: Received) -> Reply:
        with self._changed:
            self._received.append(request)
            self._changed.notify_all()
            return self._planned.popleft() if self._planned else self.default

    def _track(self, conn: socket.socket, open_: bool) -> None:
        with self._changed:
            (self._connections.add if open_ else self._connections.discard)(conn)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], handler: type[_Handler],
                 owner: Receiver) -> None:
        self.owner = owner
        super().__init__(address, handler)

    def finish_request(self, request: Any, client_address: Any) -> None:
        # TLS in the connection's own thread, so a slow or failing handshake never blocks
        # the accept loop.
        conn: socket.socket = request
        if self.owner.tls is not None:
            conn.settimeout(5)
            try:
                conn = self.owner.tls.wrap_socket(conn, server_side=True)
            except (OSError, ValueError):
                return  # the client refused the certificate, or went away
            conn.settimeout(None)
        self.owner._track(conn, True)
        try:
            super().finish_request(conn, client_address)
        finally:
            self.owner._track(conn, False)
            if conn is not request:
                conn.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up mid-answer (a timeout test) is expected


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so connection reuse is observable
    timeout = 30
    server: _Server

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        owner = self.server.owner
        reply = owner._arrived(Received(
            method=self.command, target=self.path,
            headers={k.lower(): v for k, v in self.headers.items()}, body=body,
            at=time.monotonic(), peer_port=self.client_address[1]))
        if reply.delay and owner._stopping.wait(reply.delay):
            self.close_connection = True
            return
        self.send_response(reply.status)
        if reply.retry_after is not None:
            self.send_header("Retry-After", reply.retry_after)
        if reply.location is not None:
            self.send_header("Location", reply.location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_PUT = do_DELETE = do_PATCH = do_POST

    def log_message(self, format: str, *args: Any) -> None:
        pass


class Authority:
    """A throwaway certificate authority (EC P-256 keys: fast to make)."""

    def __init__(self, name: str = "a2akit test CA") -> None:
        self._key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        self.certificate = (
            _builder(subject, subject, self._key.public_key())
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(
                digital_signature=True, key_cert_sign=True, crl_sign=True,
                content_commitment=False, key_encipherment=False, data_encipherment=False,
                key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
            .sign(self._key, hashes.SHA256()))

    def client_context(self) -> ssl.SSLContext:
        """Verifies servers against this CA only (host names checked as usual)."""
        return ssl.create_default_context(
            cadata=self.certificate.public_bytes(serialization.Encoding.PEM).decode())

    def server_context(self, *names: str, ips: tuple[str, ...] = ("127.0.0.1",)) -> ssl.SSLContext:
        """A server context whose certificate is valid for `names` and `ips` only."""
        key = ec.generate_private_key(ec.SECP256R1())
        alt = [x509.DNSName(n) for n in names] + [x509.IPAddress(ipaddress.ip_address(i))
                                                  for i in ips]
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0] if names
                                                else ips[0])])
        certificate = (
            _builder(subject, self.certificate.subject, key.public_key())
            .add_extension(x509.SubjectAlternativeName(alt), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                self._key.public_key()), critical=False)
            .sign(self._key, hashes.SHA256()))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        with tempfile.TemporaryDirectory() as folder:
            cert_file, key_file = Path(folder, "cert.pem"), Path(folder, "key.pem")
            cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
            key_file.write_bytes(key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption()))
            context.load_cert_chain(cert_file, key_file)
        return context


def _builder(subject: x509.Name, issuer: x509.Name,
             public_key: ec.EllipticCurvePublicKey) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
            .public_key(public_key).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key),
                           critical=False))
