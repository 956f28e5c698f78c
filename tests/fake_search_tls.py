"""A TLS-intercepting forward proxy on loopback that plays services with fixed https
addresses (the engines of the ``ddgs`` package: html.duckduckgo.com, en.wikipedia.org, ...),
so the real client library runs against pages written for the tests.

A client given ``proxy_url`` sends ``CONNECT host:443``; the proxy answers 200, then speaks
TLS with a certificate for that host minted on the fly by a test CA (``ca_file``, a PEM
the client trusts through its usual setting, e.g. ``PRIMP_CA_BUNDLE``), and answers each
request with the handler its host maps to in ``hosts`` (a host without one: 404).

    with TlsInterceptor({"html.duckduckgo.com": duckduckgo_html(hits)}, tmp_path) as net:
        DDGS(proxy=net.proxy_url).text("widget")   # with PRIMP_CA_BUNDLE=net.ca_file
        assert net.requests[0].form["q"] == ["widget"]

``requests`` records what arrived (host, method, path, query, form fields, headers).
"""

from __future__ import annotations

import contextlib
import datetime
import socket
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from socketserver import StreamRequestHandler, ThreadingTCPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass
class Seen:
    """One request as it arrived through the tunnel."""

    host: str
    method: str
    path: str
    query: dict[str, list[str]]
    form: dict[str, list[str]]
    headers: dict[str, str]


@dataclass(frozen=True)
class Answer:
    status: int
    body: str
    content_type: str = "text/html; charset=utf-8"


Handler = Callable[[Seen], Answer]
"""What one host answers to a request."""


class TestCA:
    """A certificate authority for one test run: mints a leaf for any host name."""

    __test__ = False  # not a pytest class

    def __init__(self, directory: Path):
        self.directory = directory
        self.key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Hermes test CA")])
        self.cert = (_builder(name, name, self.key.public_key())
                     .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                     .add_extension(x509.KeyUsage(True, False, False, False, False, True, True,
                                                  False, False), critical=True)
                     .sign(self.key, hashes.SHA256()))
        self.ca_file = directory / "test-ca.pem"
        self.ca_file.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))
        self._contexts: dict[str, ssl.SSLContext] = {}
        self._lock = threading.Lock()

    def context_for(self, host: str) -> ssl.SSLContext:
        """A server-side TLS context presenting a certificate for ``host`` (cached)."""
        with self._lock:
            if host not in self._contexts:
                self._contexts[host] = self._mint(host)
            return self._contexts[host]

    def _mint(self, host: str) -> ssl.SSLContext:
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
        cert = (_builder(subject, self.cert.subject, key.public_key())
                .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                               critical=False)
                .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                    self.key.public_key()), critical=False)
                .sign(self.key, hashes.SHA256()))
        chain = self.directory / f"leaf-{host}.pem"
        chain.write_bytes(cert.public_bytes(serialization.Encoding.PEM) + key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption()))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(chain)
        context.set_alpn_protocols(["http/1.1"])  # no h2: the handler speaks HTTP/1.1
        context.num_tickets = 0  # no resumption: every handshake checks the certificate
        return context


def _builder(subject: x509.Name, issuer: x509.Name, public_key: Any) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
            .public_key(public_key).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key),
                           critical=False))


@dataclass
class TlsInterceptor:
    """The proxy (a context manager): ``hosts`` maps a host name to its handler."""

    hosts: dict[str, Handler]
    directory: Path
    requests: list[Seen] = field(default_factory=list)
    tunnels: list[str] = field(default_factory=list)
    """The ``host:port`` of every CONNECT, in order."""

    def __enter__(self) -> TlsInterceptor:
        self.ca = TestCA(self.directory)
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self.server = ThreadingTCPServer(("127.0.0.1", 0), _tunnel_handler(self))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        with self._lock:
            for sock in self._open:  # idle keep-alive tunnels end now, not at exit
                _shut(sock)

    @property
    def proxy_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def ca_file(self) -> Path:
        return self.ca.ca_file

    def answer(self, seen: Seen) -> Answer:
        self.requests.append(seen)
        handler = self.hosts.get(seen.host)
        return handler(seen) if handler else Answer(404, "<h1>Not Found</h1>")

    def track(self, sock: socket.socket, is_open: bool) -> None:
        with self._lock:
            (self._open.add if is_open else self._open.discard)(sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _tunnel_handler(proxy: TlsInterceptor) -> type[StreamRequestHandler]:
    class Tunnel(StreamRequestHandler):
        def handle(self) -> None:
            line = self.rfile.readline(65536).decode("latin-1").split()
            while self.rfile.readline(65536).strip():
                pass  # the CONNECT request's headers
            if len(line) != 3 or line[0] != "CONNECT":
                self.wfile.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
                return
            proxy.tunnels.append(line[1])
            host = line[1].rsplit(":", 1)[0].strip("[]")
            self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            self.wfile.flush()
            proxy.track(self.connection, True)
            try:
                tls = proxy.ca.context_for(host).wrap_socket(self.connection, server_side=True)
                _site_handler(proxy, host)(tls, self.client_address, self.server)
            except (ssl.SSLError, OSError):
                pass  # a client that gave up the handshake or the connection
            finally:
                proxy.track(self.connection, False)

    return Tunnel


def _site_handler(proxy: TlsInterceptor, host: str) -> type[BaseHTTPRequestHandler]:
    class Site(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the clients expect
        timeout = 30

        def do_GET(self) -> None:
            self.respond(b"")

        def do_POST(self) -> None:
            self.respond(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

        def respond(self, body: bytes) -> None:
            parts = urlsplit(self.path)
            headers = {k.lower(): v for k, v in self.headers.items()}
            form = (parse_qs(body.decode(), keep_blank_values=True) if "form-urlencoded"
                    in headers.get("content-type", "") else {})
            answer = proxy.answer(Seen(host, self.command, parts.path,
                                       parse_qs(parts.query, keep_blank_values=True),
                                       form, headers))
            data = answer.body.encode()
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *_: Any) -> None:
            pass

    return Site
