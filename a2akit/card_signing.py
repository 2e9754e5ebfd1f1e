"""Signed agent cards (A2A 1.0 `AgentCard.signatures`): a JWS (RFC 7515) with a detached
payload, the JCS form (RFC 8785) of the card without its signatures, empty values removed,
which is how a2a-sdk canonicalizes a card, so its verifier and any other agree.

The key is a PEM private key file (A2A_CARD_SIGNING_KEY: EC P-256 signs ES256, RSA signs
RS256) or an AWS KMS asymmetric key (A2A_CARD_SIGNING_KMS_KEY_ID: ECC_NIST_P256, SIGN_VERIFY,
ES256 through `kms:Sign`; its public key is read once with `kms:GetPublicKey`). The protected
header carries `alg`, `kid` (the JWK thumbprint of the public key, RFC 7638) and `typ: JOSE`,
never a `jku`: verifiers take keys from a JWKS they trust (`/.well-known/jwks.json` is served
as a convenience). A card is signed once per process, on its first request, and kept: with
KMS, that first request pays the one call.

PyJWT (with cryptography) does the key handling and the signature encoding; `rfc8785` the
canonical JSON. Imported only when signing is configured: a door without it loads neither.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import rfc8785
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from a2akit.generated import a2a_pb2 as pb
from a2akit.protojson import to_json
from a2akit.settings import ENV, Settings, SettingsError

__all__ = ["CardSigner", "KmsKey", "PemKey", "canonical", "make_signer"]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _clean(value: Any) -> Any:
    """Empty strings, lists and objects removed, at any depth (a2a-sdk's `_clean_empty`)."""
    if isinstance(value, dict):
        cleaned = {k: c for k, v in value.items() if (c := _clean(v)) is not None}
        return cleaned or None
    if isinstance(value, list):
        items = [c for v in value if (c := _clean(v)) is not None]
        return items or None
    if isinstance(value, str) and not value:
        return None
    return value


def canonical(card: pb.AgentCard) -> bytes:
    """The bytes a card's signature covers."""
    document = to_json(card)
    document.pop("signatures", None)
    return rfc8785.dumps(_clean(document) or {})


class Key(Protocol):
    alg: str

    def public_jwk(self) -> dict[str, Any]:
        """The public key as a JWK (without `kid`, `alg`, `use`)."""

    def sign(self, signing_input: bytes) -> bytes:
        """The JWS signature (for ES256 the raw r || s, as RFC 7518 3.4 writes it)."""


class PemKey:
    """A private key from a PEM file (local use and tests)."""

    def __init__(self, path: str) -> None:
        from cryptography.hazmat.primitives.asymmetric import ec, rsa
        from cryptography.hazmat.primitives.serialization import load_pem_private_key

        try:
            key = load_pem_private_key(Path(path).read_bytes(), password=None)
        except (OSError, ValueError, TypeError) as exc:
            raise SettingsError(f"{ENV.CARD_SIGNING_KEY}={path}: not a readable PEM private "
                                f"key without a password ({exc})") from None
        self._algorithm: Any
        if isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == "secp256r1":
            self.alg, self._algorithm = "ES256", ECAlgorithm(ECAlgorithm.SHA256)
        elif isinstance(key, rsa.RSAPrivateKey) and key.key_size >= 2048:
            self.alg, self._algorithm = "RS256", RSAAlgorithm(RSAAlgorithm.SHA256)
        else:
            raise SettingsError(f"{ENV.CARD_SIGNING_KEY}={path}: an EC P-256 or an RSA key "
                                "of 2048 bits or more is needed")
        self._key: Any = key

    def public_jwk(self) -> dict[str, Any]:
        jwk: dict[str, Any] = self._algorithm.to_jwk(self._key.public_key(), as_dict=True)
        return jwk

    def sign(self, signing_input: bytes) -> bytes:
        signature: bytes = self._algorithm.sign(signing_input, self._key)
        return signature


class KmsKey:
    """An AWS KMS key (ECC_NIST_P256, SIGN_VERIFY): the private key never leaves KMS."""

    alg = "ES256"

    def __init__(self, key_id: str, client_factory: Callable[[], Any]) -> None:
        self.key_id = key_id
        self._client_factory = client_factory
        self._client: Any = None
        self._public: Any = None

    def _kms(self) -> Any:
        if self._client is None:
            self._client = self._client_factory()
        return self._client

    def public_jwk(self) -> dict[str, Any]:
        if self._public is None:
            from cryptography.hazmat.primitives.asymmetric import ec
            from cryptography.hazmat.primitives.serialization import load_der_public_key

            answer = self._kms().get_public_key(KeyId=self.key_id)
            public = load_der_public_key(answer["PublicKey"])
            if not (isinstance(public, ec.EllipticCurvePublicKey)
                    and public.curve.name == "secp256r1"):
                raise SettingsError(f"{ENV.CARD_SIGNING_KMS_KEY_ID}={self.key_id}: the key is "
                                    f"{answer.get('KeySpec')}, not ECC_NIST_P256")
            self._public = public
        jwk: dict[str, Any] = ECAlgorithm.to_jwk(self._public, as_dict=True)
        return jwk

    def sign(self, signing_input: bytes) -> bytes:
        from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

        answer = self._kms().sign(KeyId=self.key_id, Message=signing_input,
                                  MessageType="RAW", SigningAlgorithm="ECDSA_SHA_256")
        r, s = decode_dss_signature(answer["Signature"])  # KMS answers DER
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")


def _thumbprint(jwk: dict[str, Any]) -> str:
    """RFC 7638: SHA-256 of the required members, in order, compact."""
    members = ("crv", "kty", "x", "y") if jwk["kty"] == "EC" else ("e", "kty", "n")
    text = json.dumps({name: jwk[name] for name in members}, separators=(",", ":"))
    return _b64(hashlib.sha256(text.encode()).digest())


class CardSigner:
    """Signs cards with one key; each distinct card once (thread-safe: cards are first asked
    for from any worker thread or the event loop)."""

    def __init__(self, key: Key) -> None:
        self.key = key
        self._lock = threading.Lock()
        self._signed: dict[bytes, pb.AgentCard] = {}
        self._kid: str | None = None

    @property
    def kid(self) -> str:
        if self._kid is None:
            self._kid = _thumbprint(self.key.public_jwk())
        return self._kid

    def jwks(self) -> dict[str, Any]:
        """The public key as a JWK set."""
        return {"keys": [{**self.key.public_jwk(), "kid": self.kid, "alg": self.key.alg,
                          "use": "sig"}]}

    def signed(self, card: pb.AgentCard) -> pb.AgentCard:
        """`card` with this key's signature added (after the ones it has), made once."""
        payload = canonical(card)
        with self._lock:
            done = self._signed.get(payload)
            if done is None:
                header = {"alg": self.key.alg, "kid": self.kid, "typ": "JOSE"}
                protected = _b64(json.dumps(header, separators=(",", ":")).encode())
                signature = self.key.sign(f"{protected}.{_b64(payload)}".encode())
                done = pb.AgentCard()
                done.CopyFrom(card)
                done.signatures.add(protected=protected, signature=_b64(signature))
                self._signed[payload] = done
            return done


def make_signer(settings: Settings) -> CardSigner | None:
    """The signer the settings name, or None; a PEM key is read now (a bad one stops the
    process with one line), a KMS key on the first card asked for."""
    if settings.card_signing_key:
        return CardSigner(PemKey(settings.card_signing_key))
    if settings.card_signing_kms_key_id:
        from a2akit import aws

        return CardSigner(KmsKey(settings.card_signing_kms_key_id, lambda: aws.client("kms")))
    return None
