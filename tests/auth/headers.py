"""Request headers as the core's `Headers`, for calling the authenticator directly."""

from __future__ import annotations


class Headers:
    def __init__(self, values: dict[str, str] | None = None) -> None:
        self.values = {k.lower(): v for k, v in (values or {}).items()}

    def getlist(self, key: str) -> list[str]:
        return [self.values[key]] if key in self.values else []


def bearer(token: str) -> Headers:
    return Headers({"authorization": f"Bearer {token}"})
