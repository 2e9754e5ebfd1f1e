"""Verifies a served agent card's signatures with the official a2a-sdk (a2a.utils.signing), as
a third party would. Run by tests/auth/process/test_card_signing.py with the python of
.cache/sdk-venv; imports nothing of the kit.

stdin: {"card": <the card document as served>, "jwks": <a JWK set>}; prints "valid", or
"invalid: <why>" and exits 1.
"""

import json
import sys

from a2a.types import AgentCard
from a2a.utils.signing import SignatureVerificationError, create_signature_verifier
from google.protobuf import json_format
from jwt import PyJWK


def main() -> int:
    given = json.load(sys.stdin)
    card = json_format.ParseDict(given["card"], AgentCard(), ignore_unknown_fields=True)
    keys = {key["kid"]: key for key in given["jwks"]["keys"]}

    def key_provider(kid, jku):
        return PyJWK(keys[kid])  # pinned keys: never the jku

    verify = create_signature_verifier(key_provider, ["ES256", "RS256"])
    try:
        verify(card)
    except SignatureVerificationError as exc:
        print(f"invalid: {exc}")
        return 1
    print("valid")
    return 0


if __name__ == "__main__":
    sys.exit(main())
