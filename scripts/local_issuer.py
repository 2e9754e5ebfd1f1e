"""A local OpenID Connect issuer, to try the JWT scheme without an identity provider.

    .venv/bin/python -m scripts.local_issuer [--port 8090]   # foreground, until Ctrl-C

Run from the checkout's root: it is the tests' issuer (tests/auth/issuer.py) on loopback,
serving the discovery document and the JWKS the kit fetches, with one RSA key made at start
and held in memory only (its tokens die with the process); and, for local use only,
`GET /token`, which answers a fresh token (`{"access_token": ...}`: subject alice, audience
a2a-agent, scope a2a/invoke, valid ten minutes).
The kit accepts http:// for an issuer on loopback only.
"""

from __future__ import annotations

import argparse
import secrets
import threading
from typing import Any

from tests.auth.issuer import AUDIENCE, Issuer, rsa_key

TOKEN_PATH = "/token"


class LocalIssuer(Issuer):
    # A key id of its own per run: a kit still holding the last run's key set then fetches
    # the new one at the first token that names it (the same id would read as a bad signature).
    kid = f"local-{secrets.token_hex(4)}"

    def _document(self, path: str) -> dict[str, Any] | None:
        if path == TOKEN_PATH:
            return {"access_token": self.token(self.kid), "token_type": "Bearer",
                    "expires_in": 600}
        return super()._document(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=8090, help="0: any free port")
    args = parser.parse_args()
    try:
        issuer = LocalIssuer({LocalIssuer.kid: rsa_key()}, port=args.port)
    except OSError as exc:
        raise SystemExit(f"local_issuer: cannot listen on 127.0.0.1:{args.port}: "
                         f"{exc.strerror or exc}; pick another with --port") from None
    issuer.publish(issuer.kid)
    print(f"Issuer  {issuer.url}  (its key lives in memory: Ctrl-C stops it, its tokens die)\n"
          "Point the kit at it, from another shell:\n"
          f"  A2A_ALLOW_ANONYMOUS=false A2A_JWT_ISSUER={issuer.url} A2A_JWT_AUDIENCE={AUDIENCE}"
          " ./dev serve\n"
          f"A token (ten minutes): curl -s {issuer.url}{TOKEN_PATH}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        issuer.close()


if __name__ == "__main__":
    main()
