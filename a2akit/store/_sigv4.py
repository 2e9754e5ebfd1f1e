"""SigV4 for the kit's AWS JSON clients (`_client`: DynamoDB, and SQS for the queue): the
headers of one signed request.

The AWS JSON protocol is one POST to ``/`` per call, its operation in ``x-amz-target``, so
the canonical request has no path or query to encode. The signing key is derived once per
day and region (and again when the credentials change); the credentials come from
`_credentials`, fetched when needed.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac

from a2akit.store._credentials import CredentialSource

__all__ = ["Signer"]

_CONTENT_TYPE = "application/x-amz-json-1.0"


class Signer:
    """Signs requests to one endpoint (`host_header`) of `service` in `region`, operations
    named `target` + name. Thread-safe: the cached key is replaced whole."""

    def __init__(self, host_header: str, region: str, credentials: CredentialSource, *,
                 service: str = "dynamodb", target: str = "DynamoDB_20120810.") -> None:
        self._service = service
        self._target = target
        self._host_header = host_header
        self._region = region
        self._credentials = credentials
        self._keys: tuple[str, str, bytes] | None = None  # (secret, date, signing key)

    def headers(self, operation: str, body: bytes,
                now: datetime.datetime | None = None) -> dict[str, str]:
        """The headers of a signed POST of `body` calling `operation` (e.g. "GetItem")."""
        credentials = self._credentials.get()
        now = now or datetime.datetime.now(datetime.UTC)
        amz_date = now.strftime("%Y%m%dT%H%M%SZ")
        date = amz_date[:8]
        headers = {
            "content-type": _CONTENT_TYPE,
            "host": self._host_header,
            "x-amz-date": amz_date,
            "x-amz-target": self._target + operation,
        }
        if credentials.token:
            headers["x-amz-security-token"] = credentials.token
        signed = ";".join(sorted(headers))
        canonical = "\n".join((
            "POST", "/", "",
            "".join(f"{name}:{headers[name]}\n" for name in sorted(headers)),
            signed, hashlib.sha256(body).hexdigest(),
        ))
        scope = f"{date}/{self._region}/{self._service}/aws4_request"
        to_sign = "\n".join(("AWS4-HMAC-SHA256", amz_date, scope,
                             hashlib.sha256(canonical.encode()).hexdigest()))
        signature = hmac.new(self._signing_key(credentials.secret_key, date), to_sign.encode(),
                             hashlib.sha256).hexdigest()
        headers["authorization"] = (
            f"AWS4-HMAC-SHA256 Credential={credentials.access_key}/{scope}, "
            f"SignedHeaders={signed}, Signature={signature}")
        return headers

    def _signing_key(self, secret: str, date: str) -> bytes:
        keys = self._keys
        if keys is not None and keys[0] == secret and keys[1] == date:
            return keys[2]
        key = ("AWS4" + secret).encode()
        for part in (date, self._region, self._service, "aws4_request"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        self._keys = (secret, date, key)
        return key
