"""A local OpenID Connect issuer for the tests: a real HTTP server on loopback serving the
discovery document and the JWKS, with keys the tests publish and rotate, and a count of
every fetch; the tokens the tests present, good and bad; and a token endpoint for the OAuth
2.0 client-credentials grant, as Cognito's (`/oauth2/token`, the client in Basic auth)."""

from __future__ import annotations

import base64
import collections
import hashlib
import hmac
import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

AUDIENCE = "a2a-agent"
SCOPE = "a2a/invoke"
JWKS_PATH = "/keys.json"
TOKEN_PATH = "/oauth2/token"

Key = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Issuer:
    """Serves `{url}/.well-known/openid-configuration` and `{url}/keys.json`."""

    def __init__(self, keys: dict[str, Key], port: int = 0) -> None:
        self.keys = keys  # every key the tests can sign with, by kid
        self.published: list[str] = []  # the kids the JWKS shows
        self.hits: collections.Counter[str] = collections.Counter()
        self.fail = False  # answer 503 to everything
        self.delay = 0.0  # seconds to wait before answering
        self.discovered_issuer: str | None = None  # what discovery names (default: itself)
        self.clients: dict[str, str] = {}  # client id -> secret, for the token endpoint
        self.token_lifetime = 600  # seconds, the tokens' `expires_in` and `exp`
        self.token_requests: list[dict[str, str]] = []  # the form of each token request
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                issuer.hits[self.path] += 1
                time.sleep(issuer.delay)
                document = issuer._document(self.path)
                if document is None or issuer.fail:
                    self.send_error(404 if document is None else 503)
                    return
                body = json.dumps(document).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the client gave up (a timeout test)

            def do_POST(self) -> None:
                issuer.hits[self.path] += 1
                length = int(self.headers.get("Content-Length") or 0)
                form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
                issuer.token_requests.append(form)
                status, document = issuer._grant(self.path, self.headers.get("Authorization"),
                                                  form)
                body = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,),
                                        daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    @property
    def jwks_fetches(self) -> int:
        return self.hits[JWKS_PATH]

    def publish(self, *kids: str) -> None:
        self.published = list(kids)

    def _document(self, path: str) -> dict[str, Any] | None:
        if path == "/.well-known/openid-configuration":
            return {"issuer": self.discovered_issuer or self.url, "jwks_uri": self.url + JWKS_PATH,
                    "token_endpoint": self.url + "/oauth2/token"}
        if path == JWKS_PATH:
            return {"keys": [self._jwk(kid) for kid in self.published]}
        return None

    def _grant(self, path: str, authorization: str | None,
               form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        """The client-credentials grant: Cognito's answers, its error codes."""
        if path != TOKEN_PATH:
            return 404, {"error": "not_found"}
        if form.get("grant_type") != "client_credentials":
            return 400, {"error": "unsupported_grant_type"}
        scheme, _, encoded = (authorization or "").partition(" ")
        client_id, _, secret = (base64.b64decode(encoded).decode() if scheme == "Basic"
                                else "").partition(":")
        if not client_id or self.clients.get(client_id) != secret:
            return 400, {"error": "invalid_client"}
        # Cognito's access tokens name the client in `client_id`; `aud` keeps the kit's
        # audience check of these tests.
        token = self.token(sub=client_id, client_id=client_id,
                           exp=int(time.time()) + self.token_lifetime)
        return 200, {"access_token": token, "expires_in": self.token_lifetime,
                     "token_type": "Bearer"}

    def _jwk(self, kid: str) -> dict[str, Any]:
        key = self.keys[kid]
        if isinstance(key, rsa.RSAPrivateKey):
            jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
            jwk["alg"] = "RS256"
        else:  # no alg: the verifier picks it from the key type and curve
            jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
        jwk.update(kid=kid, use="sig")
        return dict(jwk)

    # --- tokens -------------------------------------------------------------------------------

    def claims(self, **overrides: Any) -> dict[str, Any]:
        now = int(time.time())
        claims: dict[str, Any] = {"iss": self.url, "aud": AUDIENCE, "sub": "alice",
                                  "iat": now, "exp": now + 600, "scope": SCOPE}
        claims.update(overrides)
        return {k: v for k, v in claims.items() if v is not None}

    def token(self, kid: str = "k1", *, key: str | None = None, **claims: Any) -> str:
        """A token with kid `kid`, signed by key `key` (default: the key of `kid`)."""
        signer = self.keys[key or kid]
        algorithm = "RS256" if isinstance(signer, rsa.RSAPrivateKey) else "ES256"
        return jwt.encode(self.claims(**claims), signer, algorithm=algorithm,
                          headers={"kid": kid})

    def unsigned_token(self, kid: str = "k1") -> str:
        """`alg: none` (RFC 7519 6.1): no signature at all."""
        header = _b64(json.dumps({"alg": "none", "typ": "JWT", "kid": kid}).encode())
        return f"{header}.{_b64(json.dumps(self.claims()).encode())}."

    def hmac_token(self, kid: str = "k1") -> str:
        """HS256 keyed with the issuer's public key (PEM): the algorithm-confusion attack."""
        public = self.keys[kid].public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        header = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": kid}).encode())
        payload = _b64(json.dumps(self.claims()).encode())
        signature = hmac.new(public, f"{header}.{payload}".encode(), hashlib.sha256).digest()
        return f"{header}.{payload}.{_b64(signature)}"


def make_keys() -> dict[str, Key]:
    """k1 and k2 (issuer keys, RSA), ec1 (issuer key, P-256) and evil (an attacker's)."""
    return {"k1": rsa_key(), "k2": rsa_key(), "evil": rsa_key(),
            "ec1": ec.generate_private_key(ec.SECP256R1())}


def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)
